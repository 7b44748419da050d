// The persona input rules are part of the wire contract (contracts/operations/personas.ts);
// the domain code uses the same ones, re-exported here with the types it needs.
import type { GRANT_ROLES, OPEN_MODES, PROPAGATIONS } from '../../contracts/operations/personas.ts'

export { credentialName, hostList, identityName, idParam, maxSessionDurationSecs, rfc3339, secretValue, GRANT_ROLES, OPEN_MODES, ORG_ROLES, PROPAGATIONS } from '../../contracts/operations/personas.ts'
export type OpenMode = (typeof OPEN_MODES)[number]
export type GrantRole = (typeof GRANT_ROLES)[number]
export type Propagation = (typeof PROPAGATIONS)[number]

export const placeholderFor = (name: string) => `{{credential:${name}}}`
