// Reach grants as a domain: granting and revoking them (networks:write holders), and
// local_reach_ensure for an agent without networks:write, which an OAuth login never holds.
// A grant names one agent and a network ('network': an existing one; 'seed': the first
// ensure creates it). A live grant may only append declared hosts; revoking it stops that
// and nothing else. Design: docs/local-reach.md#reach-grants-local-reach-for-oauth-logged-in-agents
import type { Db } from '../store/db.ts'
import { errors, isError } from '../../contracts/errors.ts'
import { recordAudit } from '../audit/audit.ts'
import { targetHost, type LocalReach } from './service.ts'
import * as networks from './store.ts'
import * as grants from './reach-grants.ts'

/** What the reach-grant domain uses; the app's Services has each (a domain room names its own deps, never the app's bag). */
export interface ReachDeps { db: Db; localReach: LocalReach; now: () => number }

/** the name a seed grant's network takes when local_reach_ensure names none (LocalReach.ensure's default too) */
const DEFAULT_NETWORK = 'local'

export async function grantReach(deps: Pick<ReachDeps, 'db' | 'now'>, request: { orgId: string; actor: string; agentId: string; networkId?: string }) {
  const { db } = deps
  const { orgId, actor, agentId } = request
  // foreign and unknown agents and networks get the one 404 (no existence oracle)
  if (!(await grants.agentExists(db, orgId, agentId))) throw errors.notFound('agent')
  const network = request.networkId ? await networks.getNetwork(db, orgId, request.networkId) : null
  const grant = await grants.insertReachGrant(db, orgId, {
    agentId, kind: network ? 'network' : 'seed', networkId: network?.id ?? null, createdBy: actor, createdAt: new Date(deps.now()),
  })
  await recordAudit(db, { orgId, actor, action: 'reach_grant.create', targetType: 'reach_grant', targetId: grant.id })
  return grants.reachGrantView(grant)
}

export async function revokeReach(deps: Pick<ReachDeps, 'db' | 'now'>, request: { orgId: string; actor: string; grantId: string }) {
  const { db } = deps
  const { orgId, actor, grantId } = request
  const { grant, revoked } = await grants.revokeReachGrant(db, orgId, grantId, { actor, at: new Date(deps.now()) })
  // idempotent: a second revoke answers the same and records nothing more
  if (revoked) await recordAudit(db, { orgId, actor, action: 'reach_grant.revoke', targetType: 'reach_grant', targetId: grant.id })
  return grants.reachGrantView(grant)
}

export async function listReach(deps: Pick<ReachDeps, 'db'>, request: { orgId: string; agentId?: string }) {
  return (await grants.listReachGrants(deps.db, request.orgId, { agentId: request.agentId })).map(grants.reachGrantView)
}

/**
 * local_reach_ensure for a caller without networks:write: allowed by a live reach grant
 * of the calling agent, else the typed 403 that says how to get one.
 *  - network named: it must be a network one of the grants covers, or a new name while a
 *    seed grant is unused (the network is created and the grant bound to it). An unknown
 *    and an ungranted name get the same 403.
 *  - network omitted: the one network the grants cover; none yet and a seed grant unused:
 *    a network named "local" is created; several: name one (400).
 */
export async function ensureByGrant(deps: ReachDeps, request: { orgId: string; agentId: string; actor: string; target: string; network?: string }) {
  // two first calls at once: the loser found the name or the grant taken (at its insert,
  // or already at its read); its second look finds the network the winner created
  // (covered by the same grant), and a second look never answers LOST_SEED_RACE
  for (let attempt = 0; ; attempt++) {
    const out = await ensureOnce(deps, request, { last: attempt > 0 })
    if (out !== LOST_SEED_RACE) return out
  }
}

const LOST_SEED_RACE = Symbol('lost the seed race')

async function ensureOnce(deps: ReachDeps, request: { orgId: string; agentId: string; actor: string; target: string; network?: string }, o: { last?: boolean } = {}) {
  const { db, localReach } = deps
  const { orgId, agentId, actor } = request
  const live = await grants.liveReachGrants(db, orgId, agentId)
  if (!live.length) throw errors.reachGrantRequired(agentId)
  const covered = [...new Set(live.map((g) => g.networkId).filter((id): id is string => id !== null))]
  const seed = live.find((g) => g.kind === 'seed' && g.networkId === null)

  // The grants were read before the network: a seed seen unused may have been bound, by a
  // call that committed in between, to the very network found taken. That is a lost race
  // (look again), not a refusal, unless this is the second look.
  const takenName = (): typeof LOST_SEED_RACE => {
    if (seed && !o.last) return LOST_SEED_RACE
    throw errors.reachNotGranted(agentId)
  }
  let n: networks.NetworkRow | null
  if (request.network !== undefined) {
    n = await networks.resolveNetwork(db, orgId, request.network)
    if (n && !covered.includes(n.id)) return takenName()
    if (!n && !seed) throw errors.reachNotGranted(agentId)
  } else if (covered.length > 1) {
    throw errors.invalidRequest('network: this agent may reach several networks; name one')
  } else if (covered.length === 1) {
    n = await networks.getNetwork(db, orgId, covered[0])
  } else {
    // only an unused seed grant: its network takes the default name, unless that is taken
    if (await networks.resolveNetwork(db, orgId, DEFAULT_NETWORK)) return takenName()
    n = null
  }

  const host = targetHost(request.target)
  if (n) return localReach.declare({ orgId, actor, network: n, host })
  let created
  try {
    created = await localReach.create({
      orgId, actor, name: request.network ?? DEFAULT_NETWORK,
      alsoInTx: async (c, networkId) => {
        if (!(await grants.bindSeedGrant(c, orgId, seed!.id, networkId))) throw errors.reachNotGranted(agentId)
      },
    })
  } catch (e) {
    // the network's insert and the grant's binding roll back together: nothing was created
    if (!o.last && (isError(e, 'networkNameTaken') || isError(e, 'reachNotGranted'))) return LOST_SEED_RACE
    throw e
  }
  return localReach.declare({ orgId, actor, network: await networks.getNetwork(db, orgId, created.network.id), host, token: created.token })
}
