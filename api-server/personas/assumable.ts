// The assumable listing (FLD-21..26): identities the calling agent could bind now.
// It shows names, slots and a lease state, never a holder, a value or a mask.
import type { Queryable } from '../store/db.ts'
import { intersectAllowlists } from '../../contracts/hosts.ts'
import { toGrant, grantState, type Grant } from './grants.ts'
import { compareRestrictiveness } from './grant-selection.ts'
import { grantPrincipalFor } from './principal.ts'
import { credentialSlots } from './credentials.ts'
import type { GrantRole, OpenMode } from './validation.ts'
import type { LeaseState } from './identities.ts'

export interface AssumableIdentity {
  id: string
  name: string
  grantRole: GrantRole
  leaseState: LeaseState
  openModes: OpenMode[]
  credentialSlots: Array<{ name: string; placeholder: string; allowedOrigins: string[] }>
}

export async function listAssumable(deps: { db: Queryable; now: () => number }, who: { orgId: string; agentId: string }): Promise<AssumableIdentity[]> {
  const { db } = deps
  const nowMs = deps.now()
  const principal = await grantPrincipalFor(db, who.orgId, who.agentId)
  const r = await db.query(`select * from identity_grants where org_id = $1 and principal_agent_id = $2`, [who.orgId, principal.agentId])
  const winners = new Map<string, Grant>()
  for (const g of r.rows.map(toGrant)) {
    if (grantState(g, nowMs) !== 'live') continue
    const cur = winners.get(g.identityId)
    if (!cur || compareRestrictiveness(g, cur) < 0) winners.set(g.identityId, g)
  }
  // A child borrowing its parent's grant cannot bind under propagation none: not assumable for it.
  if (principal.viaParent) for (const [id, g] of winners) if (g.propagation === 'none') winners.delete(id)
  const ids = [...winners.keys()]
  if (!ids.length) return []
  const idents = await db.query(
    `select i.id, i.name, i.default_open_mode, (l.identity_id is not null) as leased
       from identities i left join identity_leases l on l.identity_id = i.id
      where i.org_id = $1 and i.id = any($2) order by i.name`,
    [who.orgId, ids],
  )
  const slots = await credentialSlots(db, who.orgId, ids)
  return idents.rows.map((i) => {
    const grant = winners.get(i.id)!
    return {
      id: i.id,
      name: i.name,
      grantRole: grant.role,
      leaseState: i.leased ? 'in_use' : 'available',
      // one single-writer lease per identity: the identity opens in its default mode
      openModes: [i.default_open_mode],
      credentialSlots: slots
        .filter((s) => s.identityId === i.id)
        .map((s) => ({ name: s.name, placeholder: s.placeholder, allowedOrigins: intersectAllowlists(s.originAllowlist, grant.allowedOrigins) })),
    }
  })
}
