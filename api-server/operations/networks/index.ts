// Local-reach networks: the network_* tools and local_reach_ensure.
import { z } from 'zod'
import { defineOperation, type OpContext } from '../types.ts'
import { ApiError } from '../../../contracts/errors.ts'
import type { LocalReach } from '../../networks/service.ts'

const networkId = z.string().regex(/^nnet_[0-9A-Za-z]{1,40}$/, 'must be a network id (nnet_…)')

function reach(ctx: OpContext): LocalReach {
  if (!ctx.services.localReach) throw new ApiError(503, 'unavailable', 'local reach is not available in this process')
  return ctx.services.localReach
}
const actor = (ctx: OpContext) => ctx.auth.principal.principalId

export const networkList = defineOperation({
  name: 'network_list',
  description: 'Networks of the org (empty array if none)',
  scopes: ['networks:read'],
  input: z.strictObject({}),
  rest: { method: 'GET', path: '/v1/networks' },
  handler: (ctx) => reach(ctx).list(ctx.auth.orgId),
  toMcp: (items) => ({ content: [{ type: 'text', text: JSON.stringify(items) }], structuredContent: { items } }),
})

export const networkCreate = defineOperation({
  name: 'network_create',
  description: 'Create a network; its join token secret is returned once',
  scopes: ['networks:write'],
  input: z.strictObject({ name: z.string().min(1).max(63) }),
  rest: { method: 'POST', path: '/v1/networks', status: 201 },
  handler: (ctx, { name }) => reach(ctx).create(ctx.auth.orgId, actor(ctx), name),
})

export const networkUpdate = defineOperation({
  name: 'network_update',
  description: 'Replace the declared hosts (host, IPv4, [IPv6] or ::1, optionally :port); live sessions keep their launch-time list',
  scopes: ['networks:write'],
  input: z.strictObject({ networkId, declaredHosts: z.array(z.string().max(300)).max(1000) }),
  rest: { method: 'PATCH', path: '/v1/networks/:networkId' },
  handler: (ctx, { networkId, declaredHosts }) => reach(ctx).setDeclaredHosts(ctx.auth.orgId, actor(ctx), networkId, declaredHosts),
})

export const networkRotateToken = defineOperation({
  name: 'network_rotate_token',
  description: 'Issue a fresh join token; the old one stops working and joined daemons must rejoin',
  scopes: ['networks:write'],
  input: z.strictObject({ networkId }),
  rest: { method: 'POST', path: '/v1/networks/:networkId/rotate-token' },
  handler: (ctx, { networkId }) => reach(ctx).rotateToken(ctx.auth.orgId, actor(ctx), networkId),
})

export const networkDelete = defineOperation({
  name: 'network_delete',
  description: 'Delete a network; its tokens stop working and its daemons are dropped',
  scopes: ['networks:write'],
  input: z.strictObject({ networkId }),
  rest: { method: 'DELETE', path: '/v1/networks/:networkId', status: 204 },
  handler: async (ctx, { networkId }) => {
    await reach(ctx).delete(ctx.auth.orgId, actor(ctx), networkId)
  },
})

export const networkDaemons = defineOperation({
  name: 'network_daemons',
  description: 'Daemons of a network (reachable true while connected; empty when none is attached)',
  scopes: ['networks:read'],
  input: z.strictObject({ networkId }),
  rest: { method: 'GET', path: '/v1/networks/:networkId/daemons' },
  handler: (ctx, { networkId }) => reach(ctx).daemons(ctx.auth.orgId, networkId),
  toMcp: (items) => ({ content: [{ type: 'text', text: JSON.stringify(items) }], structuredContent: { items } }),
})

export const localReachEnsure = defineOperation({
  name: 'local_reach_ensure',
  description: 'Make a local target reachable: creates or reuses the backing network and declares the target',
  scopes: ['networks:write'],
  input: z.strictObject({
    target: z.string().min(1).max(300).describe('host[:port] or http(s) URL on the developer machine, e.g. localhost:3000'),
    network: z.string().min(1).max(63).optional().describe('network name (default "local")'),
  }),
  rest: { method: 'POST', path: '/v1/local-reach/ensure' },
  handler: (ctx, { target, network }) => reach(ctx).ensure(ctx.auth.orgId, actor(ctx), target, network),
})

export const networkOperations = [networkList, networkCreate, networkUpdate, networkRotateToken, networkDelete, networkDaemons, localReachEnsure]
