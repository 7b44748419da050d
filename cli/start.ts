// `nightjar start`: the embedded runtime — api-server and operator in one process,
// embedded Postgres, a local KMS key file, browser pods as child processes.
import { loadConfig } from '../api-server/config.ts'
import { build } from '../api-server/app.ts'
import { loadCookieKey, openDatabase } from '../api-server/runtime.ts'
import { startEmbeddedPlane } from '../api-server/sessions/embedded.ts'

export async function start(): Promise<void> {
  const config = loadConfig()
  const say = (line: string) => process.stderr.write(`nightjar: ${line}\n`)
  const database = await openDatabase(config, say)
  say(`starting the operator and a warm pool of ${config.warmPoolSize} browser pod(s)`)
  const plane = await startEmbeddedPlane({ config })
  const { app } = await build({ config, db: database.db, cookieKey: loadCookieKey(config), plane })
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    say(`${signal}: shutting down`)
    await app.close().catch(() => {})
    await plane.stop().catch(() => {})
    await database.close().catch(() => {})
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  await app.listen({ host: config.host, port: config.port })
  say(`listening on ${config.baseUrl} (console ${config.baseUrl}${config.consolePath}, MCP ${config.baseUrl}/mcp)`)
  say(`first time? run: npx nightjar admin bootstrap --org acme --email you@example.com`)
}
