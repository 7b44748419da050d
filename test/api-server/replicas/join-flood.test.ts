// A flood of 1,000 wrong join tokens spread over two replicas (many client addresses behind
// a trusted proxy, 50 at a time) while the real daemon joins with the right one: every
// wrong token is refused, the daemon registers while the flood is still running, and the
// replicas' memory does not grow with the number of refusals.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import WebSocket from 'ws'
import { startTestServer } from '../../helpers/server.ts'
import { runDaemon } from '../../../cli/daemon.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** one join attempt with a wrong token from `address` (as the trusted proxy reports it): the status it got */
function wrongJoin(url: string, address: string): Promise<number> {
  const token = `njt_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url}/ws/control?network=lab`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address } })
    ws.on('unexpected-response', (_req, r) => {
      r.resume()
      resolve(r.statusCode ?? 0)
    })
    ws.on('open', () => {
      ws.terminate()
      resolve(101)
    })
    ws.on('error', () => resolve(0))
  })
}

function heapMiB(): number {
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

t.test('1,000 wrong join tokens over two replicas: all refused, a correct join registers meanwhile, memory stays flat', async (t) => {
  const env = { NIGHTJAR_TRUSTED_PROXIES: '127.0.0.1', NIGHTJAR_LOG_LEVEL: 'warn' }
  const secret = randomBytes(32).toString('base64url')
  const a = await startTestServer(t, { env, replicaSecret: secret })
  const b = await startTestServer(t, { env, replicaSecret: secret, sharing: a })
  const acme = await a.bootstrap()
  const created = (await a.request('POST', '/v1/networks', { token: acme.apiKey, body: { name: 'lab' } })).body
  const urls = [a, b].map((s) => s.url.replace(/^http/, 'ws'))

  let sent = 0
  const statuses: number[] = []
  const flood = async (count: number) => {
    const worker = async () => {
      while (sent < count) {
        const i = sent++
        statuses.push(await wrongJoin(urls[i % 2], `203.0.${(i >> 8) & 255}.${i & 255}`))
      }
    }
    await Promise.all(Array.from({ length: 50 }, worker))
  }

  await flood(100) // warm: connections, prepared plans, limit rows
  const before = heapMiB()
  const ac = new AbortController()
  t.teardown(() => ac.abort())
  const lines: string[] = []
  let floodDone = false
  let registeredDuringFlood = false
  const flooding = flood(1100).then(() => (floodDone = true))
  const started = Date.now()
  let joinedMs = -1
  const daemon = runDaemon({
    network: 'lab', token: created.token.secret, tunnelUrl: urls[1], host: 'lab-box',
    log: (l) => {
      lines.push(l)
      if (l.startsWith('registered as') && joinedMs < 0) {
        joinedMs = Date.now() - started
        registeredDuringFlood = !floodDone
      }
    },
  }, { signal: ac.signal })
  await flooding
  const after = heapMiB()

  t.equal(statuses.length, 1100)
  t.ok(statuses.every((s) => s === 401 || s === 429), 'every wrong token is refused (401, then 429 once its network is over the limit)')
  t.ok(statuses.filter((s) => s === 429).length > 0, 'the per-network limit engaged')
  t.ok(registeredDuringFlood, 'the daemon with the right token registered while the flood was still running')
  t.comment(`the correct join registered ${joinedMs} ms after it started, during the flood`)
  t.ok(after - before < 16, `heap grew by ${(after - before).toFixed(1)} MiB over 1,000 refusals (under 16 MiB: nothing kept per refusal)`)
  t.notOk(a.logs().includes(created.token.secret) || b.logs().includes(created.token.secret), 'the join token is never logged')
  ac.abort()
  await daemon
})
