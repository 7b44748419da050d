// Whose grants an agent acts under. A spawned child is a distinct principal, but it
// holds no grants of its own: it borrows its parent's, and the parent's grant
// propagation decides whether it may (RULE-15).
import type { Queryable } from '../store/db.ts'

export interface GrantPrincipal {
  /** the agent whose grants are checked */
  agentId: string
  /** true when agentId is the parent of the calling (child) agent */
  viaParent: boolean
}

export async function grantPrincipalFor(db: Queryable, orgId: string, agentId: string): Promise<GrantPrincipal> {
  const r = await db.query(`select parent_agent_id from agents where org_id = $1 and id = $2`, [orgId, agentId])
  const parent = r.rows[0]?.parent_agent_id as string | null | undefined
  return parent ? { agentId: parent, viaParent: true } : { agentId, viaParent: false }
}
