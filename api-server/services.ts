// What handlers can reach. Built once, whole, by the app factory (build()); nothing is filled in later.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { Db } from './store/db.ts'
import type { BearerAuth } from './auth/bearer.ts'
import type { Sealer } from './kms/index.ts'
import type { SessionRuntime } from './sessions/runtime.ts'
import type { AuthStateDirectory, NetworkDirectory } from './sessions/directories.ts'
import type { LocalReach } from './networks/service.ts'
import type { Admission } from './sessions/admission.ts'
import type { StartDrain } from './sessions/start-drain.ts'
import type { Limits } from './limits/index.ts'
import type { SessionActivity } from './sessions/expiry.ts'
import type { Recordings } from './recordings/service.ts'
import type { OrgEvents } from './events/port.ts'
import type { Webhooks } from './webhooks/service.ts'

/**
 * Every field is set when build() returns, and none changes after: the app builds each
 * service whole, in dependency order (api-server/app.ts). A process without a session
 * plane gets explicit stand-ins (NO_SESSIONS), never a missing field.
 */
export interface Services {
  config: Config
  db: Db
  log: FastifyBaseLogger
  bearer: BearerAuth
  /** the secret that signs console session cookies */
  cookieKey: Uint8Array
  /** the one clock: milliseconds since the epoch; tests substitute a controllable one */
  now: () => number
  /** seals and opens persona secrets; fails closed (500) when no KMS provider is configured */
  sealer: Sealer
  /** browser sessions: resources, pod clients, the shared watch (NO_SESSIONS: every use answers 503) */
  sessions: SessionRuntime
  /** networks, join tokens and daemons */
  localReach: LocalReach
  /** network lookup for session_start (local reach) */
  networks: NetworkDirectory
  /** captured auth-state versions for warm resume (cloak) */
  authStates: AuthStateDirectory
  /** session-start admission: quotas, launch slots, the bounded queue */
  admission: Admission
  /** this process's session starts as it shuts down (sessions/start-drain.ts) */
  startDrain: StartDrain
  /** the abuse limits (sign-in, device flow, user codes, daemon joins, registration), counted in Postgres */
  limits: Limits
  /** driving calls keep a session from its idle timeout */
  activity: SessionActivity
  /** session recordings: each recorded session's pod read on a timer, blobs through the store, the retention sweep */
  recordings: Recordings
  /** the port the domain reports what happened through (session.live, human.requested …): the webhooks below listen */
  events: OrgEvents
  /** webhook endpoints, their delivery log and the delivery worker */
  webhooks: Webhooks
}
