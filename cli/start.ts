// `nightjar start`: the api-server. In the embedded runtime (the default) it also runs
// the operator and browser pods as child processes; with NIGHTJAR_RUNTIME=kubernetes it
// writes BrowserSession/Network resources to the cluster and `nightjar operator` acts.
import { closeGracefully } from '../api-server/http/drain.ts'
import { loadConfig } from '../api-server/config.ts'
import { build } from '../api-server/app.ts'
import { loadCookieKey, openDatabase } from '../api-server/store/open.ts'
import type { Db } from '../api-server/store/db.ts'
import { startEmbeddedPlane } from './embedded-plane.ts'
import type { PlaneFactory } from '../api-server/sessions/runtime.ts'
import { authStateSource } from '../api-server/authstate/index.ts'
import { startTracing } from '../telemetry/tracing.ts'
import { ConfigError } from '../contracts/config-error.ts'

export async function start(): Promise<void> {
  const config = loadConfig()
  const say = (line: string) => process.stderr.write(`nightjar: ${line}\n`)
  // spans of requests, starts and driving calls, exported when an OTLP endpoint is configured
  // (docs/observability.md); embedded browser pods are given the same settings
  const tracing = await startTracing('nightjar-api-server').catch((e: Error) => { throw new ConfigError(`invalid configuration: ${e.message}`) })
  if (tracing.enabled) say('tracing: exporting spans over OTLP')
  const database = await openDatabase(config, say, { supervise: true })
  let plane: PlaneFactory
  if (config.runtime === 'kubernetes') {
    const { loadKubeConfig, podNamespace } = await import('../operator/kube/kube-config.ts')
    const { kubeSessionPlane } = await import('../operator/kube/index.ts')
    const namespace = config.watchNamespace ?? podNamespace() ?? 'default'
    say(`kubernetes runtime: sessions are BrowserSession resources in namespace ${namespace}`)
    // the operator is its own process (`nightjar operator`): it needs none of the app's ports,
    // and neither the database nor the KMS key — a warm resume's auth-state is opened here
    // and handed over (operator/kube/auth-state-secrets.ts)
    plane = async () => kubeSessionPlane(loadKubeConfig(), namespace, { authState: authStateSource(config, database.db) })
  } else {
    say(`starting the operator and a warm pool of ${config.warmPoolSize} browser pod(s)`)
    plane = (ports) => startEmbeddedPlane({ config, authState: authStateSource(config, database.db), ...ports })
  }
  // build() starts the plane in its place in the dependency order, and stops it on close
  const built = await build({ config, db: database.db, cookieKey: loadCookieKey(config), plane }).catch(async (e: Error) => {
    say(`cannot start: ${e.message}`)
    await database.close().catch((err: Error) => say(`closing the database: ${err.message}`))
    process.exit(1)
  })
  const { app } = built
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    say(`${signal}: shutting down`)
    // shutting down: a step that fails is reported and the next one still runs (the process exits either way)
    // served on for the shutdown delay while traffic moves away, then requests in flight
    // finish (up to the drain deadline); daemons are told to reconnect
    await closeGracefully(app, config.shutdownDrainSecs * 1000, config.shutdownDelaySecs * 1000).catch((err: Error) => say(`closing the server: ${err.message}`))
    await database.close().catch((err: Error) => say(`closing the database: ${err.message}`))
    await tracing.shutdown().catch((err: Error) => say(`exporting the last spans: ${err.message}`))
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  // the first-time hint is for a fresh install: once an org exists it would only mislead
  const fresh = !(await anyOrg(database.db))
  await app.listen({ host: config.host, port: config.port })
  say(`listening on ${config.baseUrl} (console ${config.baseUrl}${config.consolePath}, MCP ${config.baseUrl}/mcp)`)
  if (fresh) say(`first time? run: npx nightjar admin bootstrap --org acme --email you@example.com`)
}

/** Whether any org exists (a failed check counts as yes: the hint is never worth an error). */
async function anyOrg(db: Db): Promise<boolean> {
  return db.query('select exists (select 1 from orgs) as present').then((r) => r.rows[0].present === true, () => true)
}
