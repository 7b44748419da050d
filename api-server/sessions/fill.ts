// The secure fill, control side: resolve the bound identity, prepare (narrow
// origins, decrypt just in time), forward a type action with requireEditableField
// to the node, then zero the plaintext. Refusals at the node are audited value-free.
import type { OpContext } from '../operations/types.ts'
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
}

/** Types a prepared secret at the node; the Buffer is zeroed whatever happens. */
export async function typePrepared(ctx: OpContext, node: NodeClient, row: SessionRow, prepared: PreparedFill, selector: string): Promise<FillOutcome> {
  const ref = {
    orgId: row.orgId, actor: row.agentId, sessionId: row.id, identityId: prepared.identityId,
    credentialId: prepared.credentialId, credentialName: prepared.credentialName,
  }
  try {
    const r = await node.secureType({ selector, value: prepared.secret, allowlist: prepared.allowlist })
    await auditFill(ctx.services.db, { ...ref, host: r.host })
    return { ok: true, credentialName: prepared.credentialName, fieldKind: r.fieldKind, host: r.host }
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

export async function fillCredential(ctx: OpContext, node: NodeClient, row: SessionRow, input: { credentialName: string; selector: string }): Promise<FillOutcome> {
  if (!row.identityId) throw noBoundIdentity()
  const prepared = await prepareFill(
    { db: ctx.services.db, now: ctx.services.now, sealer: ctx.services.sealer },
    { orgId: row.orgId, agentId: row.agentId, identityId: row.identityId, credentialName: input.credentialName, sessionId: row.id },
  )
  return typePrepared(ctx, node, row, prepared, input.selector)
}

/**
 * The deprecated free-text path: an act of verb type whose text carries a
 * {{credential:<name>}} marker. Refused (403, audited) before any decrypt or node
 * dial while the org flag is off; otherwise the same checks as a structured fill.
 * Returns null when the text carries no marker.
 */
export async function freetextFill(ctx: OpContext, row: SessionRow, text: string, selector: string | undefined, node: () => Promise<NodeClient>): Promise<FillOutcome | null> {
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
  if (!selector) {
    prepared.secret.fill(0)
    throw errors.invalidRequest('selector: required for a credential fill')
  }
  return typePrepared(ctx, await node(), row, prepared, selector)
}

