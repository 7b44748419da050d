// A real Nightjar API server on a real port with its own database, for tests.
import { closeGracefully } from '../../api-server/http/drain.ts'
import { mkdtempSync, chmodSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { loadConfig, type Config } from '../../api-server/config.ts'
import { build } from '../../api-server/app.ts'
import type { Services } from '../../api-server/services.ts'
import type { AnyOperation } from '../../api-server/operations/types.ts'
import { bootstrapOrg, type Bootstrapped } from '../../api-server/auth/orgs.ts'
import { createTestDb, type TestDb } from './db.ts'
import { startEmbeddedPlane, type EmbeddedPlane } from '../../cli/embedded-plane.ts'
import { authStateSource } from '../../api-server/authstate/index.ts'
import type { PlanePorts } from '../../api-server/sessions/runtime.ts'
import { freePort } from '../../devcluster/processes.ts'

/** a free port on 127.0.0.1 (the development cluster's helper: one copy for both) */
export { freePort }

export interface Reply<T = any> {
  status: number
  headers: Headers
  text: string
  body: T
}

export interface TestServer {
  url: string
  app: FastifyInstance
  services: Services
  config: Config
  plane?: EmbeddedPlane
  testDb: TestDb
  dataDir: string
  /** everything the server logged so far */
  logs(): string
  bootstrap(org?: string): Promise<Bootstrapped>
  request<T = any>(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<Reply<T>>
  close(): Promise<void>
}

type Tap = { teardown(fn: () => unknown): void; passing?(): boolean }

export async function startTestServer(
  t: Tap,
  opts: {
    env?: Record<string, string>
    now?: () => number
    operations?: AnyOperation[]
    /** run browser sessions: the embedded operator and real browser pods */
    sessions?: boolean
    /** where to listen (default 127.0.0.1); 0.0.0.0 lets a test's own namespaces reach it */
    listenHost?: string
    /** another replica: share this server's database instead of creating one */
    sharing?: TestServer
    /** join the replica channel with this shared secret (the address is this server's own URL) */
    replicaSecret?: string
  } = {},
): Promise<TestServer> {
  const testDb = opts.sharing?.testDb ?? await createTestDb(t)
  const dataDir = mkdtempSync(join(tmpdir(), 'nightjar-test-'))
  chmodSync(dataDir, 0o711)
  const port = await freePort()
  const config = loadConfig({
    NIGHTJAR_HOST: '127.0.0.1',
    NIGHTJAR_PORT: String(port),
    NIGHTJAR_DATA_DIR: dataDir,
    NIGHTJAR_LOG_LEVEL: 'info',
    NIGHTJAR_WARM_POOL_SIZE: '1',
    // tests written before starts answered 202 expect a 201 however long a start takes on a
    // loaded machine; the tests of the 202 answer (start-answer.alone.test.ts) set the default back
    NIGHTJAR_START_ANSWER_SECONDS: '60',
    ...(opts.replicaSecret ? { NIGHTJAR_REPLICA_SECRET: opts.replicaSecret, NIGHTJAR_REPLICA_ADDRESS: `http://127.0.0.1:${port}` } : {}),
    ...opts.env,
  })
  let logText = ''
  const logStream = new PassThrough()
  logStream.on('data', (d) => { logText += d })
  // the app starts the plane (handing it the daemon counts) and stops it on close
  const planeFactory = opts.sessions ? (ports: PlanePorts) => startEmbeddedPlane({ config, authState: authStateSource(config, testDb.db), ...ports }) : undefined
  // every REST and MCP result in the suite is checked against its operation's output schema
  const { app, services, plane } = await build({ config, db: testDb.db, cookieKey: randomBytes(32), logStream, now: opts.now, operations: opts.operations, plane: planeFactory, checkOutput: true })
  await app.listen({ host: opts.listenHost ?? '127.0.0.1', port })
  const url = `http://127.0.0.1:${port}`
  let orgCounter = 0
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    // a failed test shows what the server warned about (a pod that died, a refused write):
    // the log is secret-free by design, which the canary tests prove
    if (t.passing?.() === false) {
      const warnings = logText.split('\n').filter((l) => /"level":(4|5|6)\d/.test(l))
      if (warnings.length) process.stderr.write(`# server warnings (${warnings.length}):\n${warnings.slice(-20).map((l) => `#   ${l.slice(0, 500)}`).join('\n')}\n`)
    }
    await closeGracefully(app, 5000) // stops the plane too
    rmSync(dataDir, { recursive: true, force: true })
  }
  t.teardown(close)
  return {
    url, app, services, config, testDb, dataDir, plane,
    logs: () => logText,
    bootstrap: (org?: string) => {
      const name = org ?? `org${++orgCounter}-${randomBytes(3).toString('hex')}`
      return bootstrapOrg(testDb.db, { org: name, email: `owner@${name}.test`, password: 'correct horse battery' })
    },
    request: async (method, path, o = {}) => {
      const headers: Record<string, string> = { ...o.headers }
      if (o.token) headers.authorization = `Bearer ${o.token}`
      let body: string | undefined
      if (o.body !== undefined) {
        headers['content-type'] ??= 'application/json'
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body)
      }
      const res = await fetch(url + path, { method, headers, body, redirect: 'manual' })
      const text = await res.text()
      let parsed: any
      try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
      return { status: res.status, headers: res.headers, text, body: parsed }
    },
    close,
  }
}
