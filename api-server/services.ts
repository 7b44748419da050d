// What handlers can reach. Built once by the app factory; tests build their own.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { Db } from './store/db.ts'
import type { BearerAuth } from './auth/bearer.ts'
import type { Sealer } from './kms/index.ts'
import type { SessionPlane } from './sessions/plane.ts'
import type { NodeClients } from './sessions/nodes.ts'
import type { SessionWatcher } from './sessions/watcher.ts'
import type { AuthStateDirectory, NetworkDirectory } from './sessions/lifecycle.ts'
import type { LocalReach } from './networks/service.ts'
import type { Admission } from './sessions/admission.ts'
import type { SessionActivity } from './sessions/expiry.ts'

export interface Services {
  config: Config
  db: Db
  log: FastifyBaseLogger
  bearer: BearerAuth
  /** the secret that signs console session cookies */
  cookieKey: Uint8Array
  /** milliseconds since the epoch; tests substitute a controllable clock */
  now: () => number
  /** seals and opens persona secrets; fails closed (500) when no KMS provider is configured */
  sealer: Sealer
  /** the operator side (resources + node access); absent in processes that run no sessions */
  plane?: SessionPlane
  /** the api-server's shared watch on session resources (start waits on it) */
  sessionWatcher?: SessionWatcher
  /** cached node API clients of live sessions */
  nodeClients?: NodeClients
  /** networks, join tokens and daemons */
  localReach?: LocalReach
  /** network lookup for session_start (local reach) */
  networks?: NetworkDirectory
  /** captured auth-state versions for warm resume (cloak) */
  authStates?: AuthStateDirectory
  /** session-start admission: quotas, launch slots, the bounded queue */
  admission?: Admission
  /** driving calls keep a session from its idle timeout */
  activity?: SessionActivity
}
