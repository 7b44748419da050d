// Spawned children: a distinct agent per (parent, child name), with a provenance
// edge to its parent. Reused when the same parent spawns the same name again.
import type { Queryable } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'

export async function childAgent(db: Queryable, orgId: string, parentAgentId: string, childName: string): Promise<string> {
  const name = `${parentAgentId}/${childName}`
  const id = newId('nagt_')
  const r = await db.query(
    `insert into agents (id, org_id, name, kind, parent_agent_id, default_egress)
       select $1, $2, $3, 'child', p.id, p.default_egress from agents p where p.id = $4 and p.org_id = $2
     on conflict (org_id, name) do update set name = excluded.name
     returning id`,
    [id, orgId, name, parentAgentId],
  )
  return r.rows[0].id
}
