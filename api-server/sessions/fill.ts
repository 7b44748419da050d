// The secure fill, control side: resolve the bound identity, prepare (narrow
// origins, decrypt just in time), forward a type action with requireEditableField
// to the node, then zero the plaintext. Refusals at the node are audited value-free.
import type { DriveContext } from './drive.ts'
import { errors, isError } from '../../contracts/errors.ts'
import { prepareFill, prepareFreetextFill, checkFreetextAllowed, auditFill, auditOriginDenied, auditFieldDenied, type PreparedFill } from '../personas/index.ts'
import type { NodeClient } from './node-client.ts'
import type { SessionRow } from './store.ts'

export const noBoundIdentity = () => errors.noBoundIdentity()

export interface FillOutcome {
  ok: true
  credentialName: string
  fieldKind: string
  host: string
  /** what the fill changed on the page (perceive's notation, the value masked) */
  changes?: string
}

/** The field a fill types into: a selector or a ref from perceive (exactly one), and whether the answer says what changed. */
export interface FillTarget {
  selector?: string
  ref?: string
  changes?: boolean
}

/** Types a prepared secret at the node; the Buffer is zeroed whatever happens. */
export async function typePrepared(ctx: DriveContext, node: NodeClient, row: SessionRow, prepared: PreparedFill, field: FillTarget): Promise<FillOutcome> {
  const ref = {
    orgId: row.orgId, actor: row.agentId, sessionId: row.id, identityId: prepared.identityId,
    credentialId: prepared.credentialId, credentialName: prepared.credentialName,
  }
  try {
    const r = await node.secureType({ selector: field.selector, ref: field.ref, changes: field.changes, value: prepared.secret, allowlist: prepared.allowlist })
    await auditFill(ctx.services.db, { ...ref, host: r.host })
    const out: FillOutcome = { ok: true, credentialName: prepared.credentialName, fieldKind: r.fieldKind, host: r.host }
    return r.changes === undefined ? out : { ...out, changes: r.changes }
  } catch (e) {
    if (isError(e, 'credentialOriginDenied')) {
      await auditOriginDenied(ctx.services.db, { ...ref, host: e.details?.host ?? 'unknown' })
    } else if (isError(e, 'credentialFieldDenied')) {
      await auditFieldDenied(ctx.services.db, { ...ref, fieldKind: e.details?.field_kind ?? 'unknown' })
    }
    throw e
  } finally {
    prepared.secret.fill(0)
  }
}

export async function fillCredential(ctx: DriveContext, node: NodeClient, row: SessionRow, input: { credentialName: string } & FillTarget): Promise<FillOutcome> {
  if (!row.identityId) throw noBoundIdentity()
  const prepared = await prepareFill(
    { db: ctx.services.db, now: ctx.services.now, sealer: ctx.services.sealer },
    { orgId: row.orgId, agentId: row.agentId, identityId: row.identityId, credentialName: input.credentialName, sessionId: row.id },
  )
  return typePrepared(ctx, node, row, prepared, { selector: input.selector, ref: input.ref, changes: input.changes })
}

/**
 * The deprecated free-text path: an act of verb type whose text carries a
 * {{credential:<name>}} marker. Refused (403, audited) before any decrypt or node
 * dial while the org flag is off; otherwise the same checks as a structured fill.
 * Returns null when the text carries no marker.
 */
export async function freetextFill(ctx: DriveContext, row: SessionRow, text: string, field: FillTarget, node: () => Promise<NodeClient>): Promise<FillOutcome | null> {
  if (!/\{\{credential:/.test(text)) return null
  if (!row.identityId) {
    // still refuse (and audit) while the flag is off, so the marker never reaches a page
    await checkFreetextAllowed({ db: ctx.services.db }, row.orgId, { actor: row.agentId, sessionId: row.id })
    throw noBoundIdentity()
  }
  const prepared = await prepareFreetextFill(
    { db: ctx.services.db, now: ctx.services.now, sealer: ctx.services.sealer },
    { orgId: row.orgId, agentId: row.agentId, identityId: row.identityId, text, sessionId: row.id },
  )
  if (!prepared) return null
  if (!field.selector && !field.ref) {
    prepared.secret.fill(0)
    throw errors.invalidRequest('selector or ref: required for a credential fill')
  }
  return typePrepared(ctx, await node(), row, prepared, field)
}

