// Small helpers shared by the persona operations.
import type { OpContext } from '../types.ts'

/** Who an audit row names as the actor: the agent (or console user) behind the call. */
export const actorOf = (ctx: OpContext) => ctx.auth.principal.principalId

/** The human behind the call, if any: the console user, or whoever minted the key. */
export async function callingUserId(ctx: OpContext): Promise<string | null> {
  if (ctx.auth.userId) return ctx.auth.userId
  if (ctx.auth.principal.kind !== 'key') return null
  const r = await ctx.services.db.query(`select created_by_user_id from api_keys where id = $1 and org_id = $2`, [ctx.auth.principal.credentialId, ctx.auth.orgId])
  return r.rows[0]?.created_by_user_id ?? null
}
