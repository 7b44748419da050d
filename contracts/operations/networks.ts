// Local-reach networks: the network_* tools and local_reach_ensure. A network's join
// token secret is shown once, when the network is created or its token rotated.
import { z } from 'zod'
import { defineContract } from './types.ts'
import { personText } from '../person-text.ts'
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
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const networkCreate = defineContract({
  name: 'network_create',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Create a network; its join token secret is returned once',
  scopes: ['networks:write'],
  input: z.strictObject({ name: personText(z.string().min(1).max(63)) }),
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
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const localReachEnsure = defineContract({
  name: 'local_reach_ensure',
  description:
    'Make a local target reachable: creates or reuses the backing network and declares the target. ' +
    'Needs networks:write, or a reach grant for the calling agent (an OAuth login never holds networks:write): ' +
    'a grant to a network lets the agent declare targets on that network; a seed grant lets it create its own network once (named by network, default "local")',
  // the operation decides: networks:write, or a live reach grant for the calling agent
  // (api-server/networks/reach.ts); without either, a typed 403 that says how to get one
  scopes: [],
  input: z.strictObject({
    target: z.string().min(1).max(300).describe('host[:port] or http(s) URL on the developer machine, e.g. localhost:3000'),
    network: personText(z.string().min(1).max(63)).optional().describe('network name (default "local"; with a reach grant, the network granted)'),
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

// --- reach grants ----------------------------------------------------------------------
// A reach grant lets one agent call local_reach_ensure without networks:write (which an
// OAuth login never holds). Whoever holds networks:write grants and revokes them (a
// console user with the owner or admin role, or a key with networks:write): a grant
// delegates part of that scope, so only a holder may hand it on (as with key minting).

export const reachGrantId = z.string().regex(/^nrch_[0-9A-Za-z]{1,40}$/, 'must be a reach grant id (nrch_…)')
const agentIdField = z.string().regex(/^nagt_[0-9A-Za-z]{1,40}$/, 'must be an agent id (nagt_…)')

export const REACH_GRANT_KINDS = ['network', 'seed'] as const
export const REACH_GRANT_STATES = ['live', 'revoked', 'ended'] as const

export const ReachGrantView = z.object({
  id: z.string().describe('nrch_…'),
  agentId: z.string().describe('the agent that may call local_reach_ensure with it'),
  kind: z.enum(REACH_GRANT_KINDS).describe('network: reach on one existing network; seed: the agent may create one network of its own (its first local_reach_ensure names it) and reach it'),
  networkId: z.string().nullable().describe('the backing network; null for a seed grant whose network is not created yet (or was deleted: the next local_reach_ensure creates it again)'),
  state: z.enum(REACH_GRANT_STATES).describe('live: local_reach_ensure may use it; revoked; ended: its network was deleted (network grants)'),
  createdBy: z.string().describe('who granted it: the console user, or the agent behind the key'),
  createdAt: isoTimestamp,
  revokedAt: isoTimestamp.nullable(),
})

export const networkReachGrantCreate = defineContract({
  name: 'network_reach_grant_create',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Grant an agent local reach without networks:write: to an existing network (networkId), or, without networkId, the right to create one network of its own with local_reach_ensure',
  scopes: ['networks:write'],
  input: z.strictObject({
    agentId: agentIdField.describe('the agent (nagt_…; an OAuth login’s agent is in its GET /v1/me)'),
    networkId: networkId.optional().describe('the network it may reach; omit to let the agent create its own'),
  }),
  output: ReachGrantView,
  rest: { method: 'POST', path: '/v1/local-reach/grants', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const networkReachGrantList = defineContract({
  name: 'network_reach_grant_list',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Reach grants of the org, oldest first, each with its state (live, revoked, ended)',
  scopes: ['networks:read'],
  input: z.strictObject({ agentId: agentIdField.optional().describe('only this agent’s grants') }),
  output: z.array(ReachGrantView),
  rest: { method: 'GET', path: '/v1/local-reach/grants' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const networkReachGrantRevoke = defineContract({
  name: 'network_reach_grant_revoke',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Revoke a reach grant (idempotent): local_reach_ensure stops working with it; networks, declared hosts and daemons stay as they are',
  scopes: ['networks:write'],
  input: z.strictObject({ grantId: reachGrantId }),
  output: z.void(),
  rest: { method: 'POST', path: '/v1/local-reach/grants/:grantId/revoke', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const networkContracts = [
  networkList, networkCreate, networkUpdate, networkRotateToken, networkDelete, networkDaemons, localReachEnsure,
  networkReachGrantCreate, networkReachGrantList, networkReachGrantRevoke,
] as const
