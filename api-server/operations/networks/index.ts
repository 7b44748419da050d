// Local-reach networks: the network_* operations (reach grants included) and local_reach_ensure.
import { implement, type OpContext } from '../types.ts'
import * as c from '../../../contracts/operations/networks.ts'
import { ensureByGrant, grantReach, listReach, revokeReach } from '../../networks/reach.ts'

const reach = (ctx: OpContext) => ctx.services.localReach
const actor = (ctx: OpContext) => ctx.auth.principal.principalId

export const networkList = implement(c.networkList, {
  handler: async (ctx) => reach(ctx).list({ orgId: ctx.auth.orgId }),
  toMcp: (items) => ({ content: [{ type: 'text', text: JSON.stringify(items) }], structuredContent: { items } }),
})

export const networkCreate = implement(c.networkCreate, {
  handler: async (ctx, { name }) => reach(ctx).create({ orgId: ctx.auth.orgId, actor: actor(ctx), name }),
})

export const networkUpdate = implement(c.networkUpdate, {
  handler: async (ctx, { networkId, declaredHosts }) => reach(ctx).setDeclaredHosts({ orgId: ctx.auth.orgId, actor: actor(ctx), id: networkId, hosts: declaredHosts }),
})

export const networkRotateToken = implement(c.networkRotateToken, {
  handler: async (ctx, { networkId }) => reach(ctx).rotateToken({ orgId: ctx.auth.orgId, actor: actor(ctx), id: networkId }),
})

export const networkDelete = implement(c.networkDelete, {
  handler: async (ctx, { networkId }) => {
    await reach(ctx).delete({ orgId: ctx.auth.orgId, actor: actor(ctx), id: networkId })
  },
})

export const networkDaemons = implement(c.networkDaemons, {
  handler: async (ctx, { networkId }) => reach(ctx).daemons({ orgId: ctx.auth.orgId, id: networkId }),
  toMcp: (items) => ({ content: [{ type: 'text', text: JSON.stringify(items) }], structuredContent: { items } }),
})

// The contract requires no scope: networks:write goes on as it always did; without it,
// a live reach grant of the calling agent decides (api-server/networks/reach.ts).
export const localReachEnsure = implement(c.localReachEnsure, {
  handler: async (ctx, { target, network }) => ctx.auth.scopes.has('networks:write')
    ? reach(ctx).ensure({ orgId: ctx.auth.orgId, actor: actor(ctx), target, networkName: network })
    : ensureByGrant(ctx.services, { orgId: ctx.auth.orgId, agentId: ctx.auth.agentId, actor: actor(ctx), target, network }),
})

export const networkReachGrantCreate = implement(c.networkReachGrantCreate, {
  handler: async (ctx, { agentId, networkId }) => grantReach(ctx.services, { orgId: ctx.auth.orgId, actor: actor(ctx), agentId, networkId }),
})

export const networkReachGrantList = implement(c.networkReachGrantList, {
  handler: async (ctx, { agentId }) => listReach(ctx.services, { orgId: ctx.auth.orgId, agentId }),
})

export const networkReachGrantRevoke = implement(c.networkReachGrantRevoke, {
  handler: async (ctx, { grantId }) => {
    await revokeReach(ctx.services, { orgId: ctx.auth.orgId, actor: actor(ctx), grantId })
  },
})

export const networkOperations = [
  networkList, networkCreate, networkUpdate, networkRotateToken, networkDelete, networkDaemons, localReachEnsure,
  networkReachGrantCreate, networkReachGrantList, networkReachGrantRevoke,
]
