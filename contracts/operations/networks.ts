// Local-reach networks: the network_* tools and local_reach_ensure. A network's join
// token secret is shown once, when the network is created or its token rotated.
import { z } from 'zod'
import { defineContract } from './types.ts'
import { isoTime as isoTimestamp } from './fields.ts'

export const networkId = z.string().regex(/^nnet_[0-9A-Za-z]{1,40}$/, 'must be a network id (nnet_…)')

// --- results -------------------------------------------------------------------------

const counts = {
  daemonCount: z.number().int().nonnegative().describe('daemons known to the network, connected or not'),
  onlineDaemonCount: z.number().int().nonnegative().describe('daemons reachable now'),
}

export const NetworkView = z.object({
  id: z.string().describe('nnet_…'),
  name: z.string(),
  ...counts,
  declaredHosts: z.array(z.string()).describe('canonical host[:port] entries'),
})

/** A network just created: no daemon yet, nothing declared — the spec's create response (FLD-40) leaves declaredHosts out. */
export const NewNetwork = z.object({ id: z.string().describe('nnet_…'), name: z.string(), ...counts })

export const JoinToken = z.object({
  tokenId: z.string(),
  secret: z.string().describe('the join token (njt_…) a daemon joins with; shown only in this response, store it now'),
})

export const Daemon = z.object({
  id: z.string(),
  host: z.string(),
  version: z.string(),
  connectedSince: isoTimestamp,
  reachable: z.boolean().describe('true while connected'),
})

// --- operations ----------------------------------------------------------------------

export const networkList = defineContract({
  name: 'network_list',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Networks of the org (empty array if none)',
  scopes: ['networks:read'],
  input: z.strictObject({}),
  output: z.array(NetworkView),
  mcpOutput: z.object({ items: z.array(NetworkView) }),
  rest: { method: 'GET', path: '/v1/networks' },
  annotations: { readOnlyHint: true, openWorldHint: false },
})

export const networkCreate = defineContract({
  name: 'network_create',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Create a network; its join token secret is returned once',
  scopes: ['networks:write'],
  input: z.strictObject({ name: z.string().min(1).max(63) }),
  output: z.object({ network: NewNetwork, token: JoinToken }),
  rest: { method: 'POST', path: '/v1/networks', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const networkUpdate = defineContract({
  name: 'network_update',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Replace the declared hosts (host, IPv4, [IPv6] or ::1, optionally :port); live sessions keep their launch-time list',
  scopes: ['networks:write'],
  input: z.strictObject({ networkId, declaredHosts: z.array(z.string().max(300)).max(1000) }),
  output: NetworkView,
  rest: { method: 'PATCH', path: '/v1/networks/:networkId' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const networkRotateToken = defineContract({
  name: 'network_rotate_token',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Issue a fresh join token; the old one stops working and joined daemons must rejoin',
  scopes: ['networks:write'],
  input: z.strictObject({ networkId }),
  output: z.object({ network: NetworkView, token: JoinToken }),
  rest: { method: 'POST', path: '/v1/networks/:networkId/rotate-token' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
})

export const networkDelete = defineContract({
  name: 'network_delete',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Delete a network; its tokens stop working and its daemons are dropped',
  scopes: ['networks:write'],
  input: z.strictObject({ networkId }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/networks/:networkId', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const networkDaemons = defineContract({
  name: 'network_daemons',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Daemons of a network (reachable true while connected; empty when none is attached)',
  scopes: ['networks:read'],
  input: z.strictObject({ networkId }),
  output: z.array(Daemon),
  mcpOutput: z.object({ items: z.array(Daemon) }),
  rest: { method: 'GET', path: '/v1/networks/:networkId/daemons' },
  annotations: { readOnlyHint: true, openWorldHint: false },
})

export const localReachEnsure = defineContract({
  name: 'local_reach_ensure',
  description: 'Make a local target reachable: creates or reuses the backing network and declares the target',
  scopes: ['networks:write'],
  input: z.strictObject({
    target: z.string().min(1).max(300).describe('host[:port] or http(s) URL on the developer machine, e.g. localhost:3000'),
    network: z.string().min(1).max(63).optional().describe('network name (default "local")'),
  }),
  output: z.object({
    network: NetworkView,
    declared: z.string().describe('the target as the declared host entry (host[:port])'),
    created: z.boolean().describe('true when the network was created by this call'),
    token: JoinToken.optional().describe('only when the network was created by this call: its join token, shown once'),
  }),
  rest: { method: 'POST', path: '/v1/local-reach/ensure' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const networkContracts = [networkList, networkCreate, networkUpdate, networkRotateToken, networkDelete, networkDaemons, localReachEnsure] as const
