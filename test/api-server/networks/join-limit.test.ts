// Wrong join tokens at /ws/control are limited per client address (429 +
// Retry-After before any token lookup), while a correct join from elsewhere still
// works. Real WebSockets (ws) and the real daemon join loop (cli/daemon.ts); the
// attacker speaks from another loopback address (127.0.0.2). No sleeps: the window
// runs on the injected service clock.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import { startTestServer } from '../../helpers/server.ts'
import { testClock } from '../oauth/helpers.ts'
import { runDaemon } from '../../../cli/daemon.ts'
import { waitFor } from '../../helpers/wait.ts'

interface JoinResult { status: number; retryAfter?: string; body: string }

/** One join attempt: 101 when the upgrade is accepted (closed again at once), else the refusal. */
function join(tunnelUrl: string, network: string, token: string, localAddress?: string): Promise<JoinResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${tunnelUrl}/ws/control?network=${network}`, { headers: { authorization: `Bearer ${token}` }, ...(localAddress ? { localAddress } : {}) })
    ws.on('unexpected-response', (_req, r) => {
      let body = ''
      r.on('data', (d) => (body += d)).on('end', () => resolve({ status: r.statusCode ?? 0, retryAfter: r.headers['retry-after'] as string | undefined, body }))
    })
    ws.on('open', () => {
      ws.close()
      resolve({ status: 101, body: '' })
    })
    ws.on('error', (e) => reject(e))
  })
}

t.test('[ERR-02] [RULE-11] [AUTH-04] /ws/control: a flood of wrong join tokens is limited; a correct join still works', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now, env: { NIGHTJAR_JOIN_FAILURE_LIMIT: '5', NIGHTJAR_JOIN_FAILURE_WINDOW_SECONDS: '300' } })
  const acme = await s.bootstrap()
  const tunnelUrl = s.url.replace('http', 'ws')
  const created = (await s.request('POST', '/v1/networks', { token: acme.apiKey, body: { name: 'lab' } })).body
  const secret: string = created.token.secret

  const attacker: JoinResult[] = []
  for (let i = 0; i < 40; i++) attacker.push(await join(tunnelUrl, 'lab', `njt_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`, '127.0.0.2'))
  t.same(attacker.slice(0, 5).map((r) => r.status), [401, 401, 401, 401, 401], 'the first wrong tokens: 401 unauthorized')
  t.ok(attacker.slice(5).every((r) => r.status === 429), 'then every attempt from that address: 429')
  const limited = attacker[attacker.length - 1]
  t.ok(Number(limited.retryAfter) >= 1 && Number(limited.retryAfter) <= 300, 'with Retry-After')
  t.match(limited.body, /too many failed joins/)
  const rightFromAttacker = await join(tunnelUrl, 'lab', secret, '127.0.0.2')
  t.equal(rightFromAttacker.status, 429, 'the limited address is refused before any token lookup, even with the right token')

  // the real daemon, from another address, joins and registers
  const ac = new AbortController()
  const lines: string[] = []
  const done = runDaemon({ network: 'lab', token: secret, tunnelUrl, host: 'lab-box', daemonId: 'ndmn_labbox', log: (l) => lines.push(l), backoff: { initialMs: 50, maxMs: 200 } }, { signal: ac.signal })
  done.catch(() => {})
  t.teardown(() => ac.abort())
  await waitFor(async () => (await s.request('GET', `/v1/networks/${created.network.id}/daemons`, { token: acme.apiKey })).body.some((d: any) => d.reachable), { what: 'daemon registered' })
  t.ok(lines.some((l) => l.startsWith('registered as ndmn_labbox')), 'a correct join from another address works during the flood')
  t.equal((await join(tunnelUrl, 'lab', secret)).status, 101, 'and so does a plain WebSocket join with the right token')

  clock.advance(301_000)
  t.equal((await join(tunnelUrl, 'lab', secret, '127.0.0.2')).status, 101, 'after the window the address may join again')
  t.equal((await join(tunnelUrl, 'lab', `njt_${'y'.repeat(43)}`, '127.0.0.2')).status, 401, 'and wrong tokens are counted afresh')
  t.notOk(s.logs().includes(secret), 'the join token is never logged')
  ac.abort()
  await done
})

t.test('wrong join tokens for one network from many addresses: 401s, then 429 — and the right token still joins', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_JOIN_FAILURE_LIMIT: '100', NIGHTJAR_JOIN_NETWORK_FAILURE_LIMIT: '3' } })
  const acme = await s.bootstrap()
  const tunnelUrl = s.url.replace('http', 'ws')
  const lab = (await s.request('POST', '/v1/networks', { token: acme.apiKey, body: { name: 'lab' } })).body
  await s.request('POST', '/v1/networks', { token: acme.apiKey, body: { name: 'other' } })
  const wrong = () => `njt_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`
  const spread: number[] = []
  // a distributed guesser: every attempt from another address, all at one network
  for (let i = 0; i < 6; i++) spread.push((await join(tunnelUrl, 'lab', wrong(), `127.0.0.${10 + i}`)).status)
  t.same(spread, [401, 401, 401, 429, 429, 429], 'the network counts failures from every address')
  t.equal((await join(tunnelUrl, 'lab', lab.token.secret, '127.0.0.30')).status, 101, 'the right token is never refused for its network’s sake')
  t.equal((await join(tunnelUrl, 'other', wrong(), '127.0.0.31')).status, 401, 'another network keeps its own budget')
})
