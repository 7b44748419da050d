// Errors of the toolbox: reach grants. local_reach_ensure needs networks:write
// or a live reach grant for the calling agent (api-server/networks/reach.ts); the grants
// are given and revoked by a networks:write holder (POST /v1/local-reach/grants, or the
// console's Local reach page).
import type { ApiEntry } from './entry.ts'

export const REACH_ERRORS = {
  reachGrantRequired: {
    status: 403, code: 'forbidden', reason: 'reach_grant_required', args: ['agentId'], spec: null,
    message: (agentId: string) =>
      `local_reach_ensure needs networks:write or a reach grant for this agent (${agentId}); ` +
      'a console user with the owner or admin role grants one on the console’s Local reach page, or a key with networks:write with ' +
      `POST /v1/local-reach/grants {"agentId":"${agentId}"} (add "networkId" to grant one existing network)`,
    when: 'local_reach_ensure by a credential without networks:write whose agent holds no live reach grant (an OAuth login, until a human grants reach)',
  },
  reachNotGranted: {
    status: 403, code: 'forbidden', reason: 'reach_not_granted', args: ['agentId'], spec: null,
    message: (agentId: string) =>
      `no live reach grant of this agent (${agentId}) covers that network; omit network to use the network granted, ` +
      'or ask a networks:write holder (console Local reach page, or POST /v1/local-reach/grants) for a grant to it',
    when: 'local_reach_ensure by a reach-grant holder naming a network its grants do not cover (an existing one not granted, or a new one without an unused seed grant); unknown and ungranted names get the same answer',
  },
  reachGrantExists: {
    status: 409, code: 'conflict', reason: 'reach_grant_exists', message: 'the agent already holds that live reach grant', spec: null,
    when: 'granting an agent reach to a network it already has a live grant to, or a second live seed grant',
  },
} as const satisfies Record<string, ApiEntry>
