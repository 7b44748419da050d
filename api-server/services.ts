// What handlers can reach. Built once by the app factory; tests build their own.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { Db } from './store/db.ts'
import type { BearerAuth } from './auth/bearer.ts'

export interface Services {
  config: Config
  db: Db
  log: FastifyBaseLogger
  bearer: BearerAuth
  /** the secret that signs console session cookies */
  cookieKey: Uint8Array
  /** milliseconds since the epoch; tests substitute a controllable clock */
  now: () => number
}
