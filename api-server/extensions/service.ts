// What the extension_* operations, a session's start and the sealed fill ask of the org's
// extensions: upload (checked whole, untrusted), list, trust (audited), delete (audited),
// the ids a start may load, the files its pod unpacks, and which of a session's extensions
// are not trusted now. Design: docs/extensions.md
import type { z } from 'zod'
import type { Queryable } from '../store/db.ts'
import { errors } from '../../contracts/errors.ts'
import { newId } from '../../contracts/ids.ts'
import type { ExtensionView as ExtensionViewShape } from '../../contracts/operations/extensions.ts'
import { recordAudit } from '../audit/audit.ts'
import { parseExtension } from './package.ts'
import {
  countExtensions, deleteExtension as deleteRow, extensionPackages, findExtensions, identityExtensionIds, insertExtension, listExtensions,
  sessionExtensionIds, setIdentityExtensions, setTrust, type ExtensionRow,
} from './store.ts'

/** extensions an org may hold */
export const MAX_EXTENSIONS_PER_ORG = 50

/** what the extension_* operations answer: the contract's own shape */
export type ExtensionView = z.infer<typeof ExtensionViewShape>

export function extensionView(r: ExtensionRow): ExtensionView {
  const m = r.manifest
  return {
    id: r.id, name: r.name, version: r.version, description: m.description, sha256: r.sha256, bytes: r.packageBytes,
    permissions: m.permissions, optionalPermissions: m.optionalPermissions, hostPermissions: m.hostPermissions, contentScripts: m.contentScripts,
    serviceWorker: m.serviceWorker, trusted: r.trusted, trustDecidedBy: r.trustDecidedBy, trustDecidedAt: r.trustDecidedAt, trustReason: r.trustReason,
    createdBy: r.createdBy, createdAt: r.createdAt,
  }
}


export async function uploadExtension(db: Queryable, req: { orgId: string; actor: string; zip: Uint8Array }): Promise<ExtensionView> {
  const parsed = parseExtension(req.zip)
  if ((await countExtensions(db, req.orgId)) >= MAX_EXTENSIONS_PER_ORG) throw errors.tooManyExtensions(MAX_EXTENSIONS_PER_ORG)
  const row = await insertExtension(db, {
    id: newId('next_'), orgId: req.orgId, name: parsed.summary.name, version: parsed.summary.version, sha256: parsed.sha256,
    manifest: parsed.summary, pkg: req.zip, createdBy: req.actor,
  })
  await recordAudit(db, { orgId: req.orgId, actor: req.actor, action: 'extension.upload', targetType: 'extension', targetId: row.id })
  return extensionView(row)
}

export async function listExtensionViews(db: Queryable, req: { orgId: string }): Promise<ExtensionView[]> {
  return (await listExtensions(db, req.orgId)).map(extensionView)
}

export async function getExtensionView(db: Queryable, req: { orgId: string; id: string }): Promise<ExtensionView> {
  const [row] = await findExtensions(db, req.orgId, [req.id])
  if (!row) throw errors.notFound('extension')
  return extensionView(row)
}

/** An admin's decision, audited as extension.trust or extension.distrust (the reason stays on the row: it is a person's words). */
export async function decideTrust(db: Queryable, req: { orgId: string; actor: string; id: string; trusted: boolean; reason?: string; now: number }): Promise<ExtensionView> {
  const row = await setTrust(db, { orgId: req.orgId, id: req.id, trusted: req.trusted, actor: req.actor, reason: req.reason ?? null, at: new Date(req.now).toISOString() })
  if (!row) throw errors.notFound('extension')
  await recordAudit(db, { orgId: req.orgId, actor: req.actor, action: req.trusted ? 'extension.trust' : 'extension.distrust', targetType: 'extension', targetId: row.id })
  return extensionView(row)
}

export async function removeExtension(db: Queryable, req: { orgId: string; actor: string; id: string }): Promise<void> {
  if (!(await deleteRow(db, req.orgId, req.id))) throw errors.notFound('extension')
  await recordAudit(db, { orgId: req.orgId, actor: req.actor, action: 'extension.delete', targetType: 'extension', targetId: req.id })
}

/** The ids given, each an extension of the org (else the one 404). */
export async function checkExtensionIds(db: Queryable, req: { orgId: string; ids: readonly string[] }): Promise<string[]> {
  const found = new Set((await findExtensions(db, req.orgId, req.ids)).map((r) => r.id))
  if (req.ids.some((id) => !found.has(id))) throw errors.notFound('extension')
  return [...req.ids]
}

/** The extensions a start loads: the ones it names, else its identity's default (each still the org's). */
export async function extensionsForStart(db: Queryable, req: { orgId: string; asked?: readonly string[]; identityId?: string }): Promise<string[]> {
  if (req.asked?.length) return checkExtensionIds(db, { orgId: req.orgId, ids: req.asked })
  if (!req.identityId) return []
  const ids = await identityExtensionIds(db, req.orgId, req.identityId)
  // an extension deleted since the identity named it is left out, not a failed start
  return (await findExtensions(db, req.orgId, ids)).map((r) => r.id).sort((a, b) => ids.indexOf(a) - ids.indexOf(b))
}

export async function setIdentityDefaultExtensions(db: Queryable, req: { orgId: string; identityId: string; ids: readonly string[] }): Promise<string[]> {
  const ids = await checkExtensionIds(db, { orgId: req.orgId, ids: req.ids })
  if (!(await setIdentityExtensions(db, req.orgId, req.identityId, ids))) throw errors.notFound('identity')
  return ids
}

/** A session's extensions and those of them not trusted now (deleted ones count as not trusted). */
export async function sessionExtensionTrust(db: Queryable, req: { orgId: string; sessionId: string }): Promise<{ loaded: string[]; untrusted: string[] }> {
  const loaded = await sessionExtensionIds(db, req.orgId, req.sessionId)
  if (!loaded.length) return { loaded, untrusted: [] }
  const trusted = new Set((await findExtensions(db, req.orgId, loaded)).filter((r) => r.trusted).map((r) => r.id))
  return { loaded, untrusted: loaded.filter((id) => !trusted.has(id)) }
}

/** The files of each extension, as the pod unpacks them (checked again: a row is only ever what an upload accepted). */
export async function extensionFilesForPod(db: Queryable, req: { orgId: string; ids: readonly string[] }): Promise<Array<{ id: string; files: Array<{ path: string; dataBase64: string }> }>> {
  const packages = await extensionPackages(db, req.orgId, req.ids)
  return req.ids.map((id) => {
    const zip = packages.get(id)
    if (!zip) throw errors.notFound('extension')
    return { id, files: parseExtension(zip).files.map((f) => ({ path: f.path, dataBase64: Buffer.from(f.data).toString('base64') })) }
  })
}
