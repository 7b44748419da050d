// Local-reach networks: the network_* tools and local_reach_ensure.
import { implement, type OpContext } from '../types.ts'
import * as c from '../../../contracts/operations/networks.ts'

const reach = (ctx: OpContext) => ctx.services.localReach
const actor = (ctx: OpContext) => ctx.auth.principal.principalId

export const networkList = implement(c.networkList, {
  handler: async (ctx) => reach(ctx).list(ctx.auth.orgId),
  toMcp: (items) => ({ content: [{ type: 'text', text: JSON.stringify(items) }], structuredContent: { items } }),
})

export const networkCreate = implement(c.networkCreate, {
  handler: async (ctx, { name }) => reach(ctx).create(ctx.auth.orgId, actor(ctx), name),
})

export const networkUpdate = implement(c.networkUpdate, {
  handler: async (ctx, { networkId, declaredHosts }) => reach(ctx).setDeclaredHosts(ctx.auth.orgId, actor(ctx), networkId, declaredHosts),
})

export const networkRotateToken = implement(c.networkRotateToken, {
  handler: async (ctx, { networkId }) => reach(ctx).rotateToken(ctx.auth.orgId, actor(ctx), networkId),
})

export const networkDelete = implement(c.networkDelete, {
  handler: async (ctx, { networkId }) => {
    await reach(ctx).delete(ctx.auth.orgId, actor(ctx), networkId)
  },
})

export const networkDaemons = implement(c.networkDaemons, {
  handler: async (ctx, { networkId }) => reach(ctx).daemons(ctx.auth.orgId, networkId),
  toMcp: (items) => ({ content: [{ type: 'text', text: JSON.stringify(items) }], structuredContent: { items } }),
})

export const localReachEnsure = implement(c.localReachEnsure, {
  handler: async (ctx, { target, network }) => reach(ctx).ensure(ctx.auth.orgId, actor(ctx), target, network),
})

export const networkOperations = [networkList, networkCreate, networkUpdate, networkRotateToken, networkDelete, networkDaemons, localReachEnsure]
