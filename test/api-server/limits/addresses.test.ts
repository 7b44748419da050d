// Per-address limits key on the real client: the TCP peer, or — only behind a proxy named
// in NIGHTJAR_TRUSTED_PROXIES — the address that proxy reports. And a flood of bad Bearer
// tokens from one address is turned away with 429 while working tokens still work.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'

const BUILTIN = 'ncli_nightjar_cli'
const device = (url: string, forwardedFor?: string) =>
  fetch(`${url}/oauth/device`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: `client_id=${BUILTIN}`,
  })
const LIMIT = { NIGHTJAR_DEVICE_RATE_LIMIT: '3', NIGHTJAR_DEVICE_RATE_WINDOW_SECONDS: '60' }

t.test('X-Forwarded-For is believed only from a trusted proxy', async (t) => {
  t.test('no trusted proxy: a forged header does not buy a fresh budget', async (t) => {
    const s = await startTestServer(t, { env: LIMIT })
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await device(s.url, `198.51.100.${i + 1}`)).status)
    t.same(statuses, [200, 200, 200, 429, 429], 'every request counts against the peer, whatever the header says')
  })
  t.test('behind a trusted proxy: each client has its own budget', async (t) => {
    const s = await startTestServer(t, { env: { ...LIMIT, NIGHTJAR_TRUSTED_PROXIES: '127.0.0.1/32' } })
    const a = []
    for (let i = 0; i < 4; i++) a.push((await device(s.url, '203.0.113.7')).status)
    t.same(a, [200, 200, 200, 429], 'one client spends its own budget')
    t.equal((await device(s.url, '203.0.113.8')).status, 200, 'another client behind the same proxy is not affected')
    // a client that writes its own header in front of the proxy's: only the proxy's hop counts
    t.equal((await device(s.url, '198.51.100.1, 203.0.113.7')).status, 429, 'a forged left-most entry does not help')
  })
  t.test('a malformed proxy list is refused at start with the variable named', async (t) => {
    await t.rejects(startTestServer(t, { env: { NIGHTJAR_TRUSTED_PROXIES: '10.0.0.0/8,not-an-address' } }), /NIGHTJAR_TRUSTED_PROXIES/)
  })
})

t.test('bad Bearer tokens from one address: 401s, then 429 with Retry-After; a working token still works', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_BEARER_FAILURE_LIMIT: '5', NIGHTJAR_BEARER_FAILURE_WINDOW_SECONDS: '60' } })
  const org = await s.bootstrap()
  const bodies: string[] = []
  for (let i = 0; i < 5; i++) {
    const r = await s.request('GET', '/v1/me', { token: `njk_${'x'.repeat(20 + i)}` })
    t.equal(r.status, 401, `bad token ${i + 1}: 401`)
    bodies.push(r.text)
  }
  t.equal(new Set(bodies).size, 1, 'the 401s are byte-identical')
  const limited = await s.request('GET', '/v1/me', { token: 'njk_' + 'y'.repeat(30) })
  t.equal(limited.status, 429, 'past the limit: 429')
  t.equal(limited.body.error.reason, 'too_many_bad_tokens')
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'with Retry-After')
  const good = await s.request('GET', '/v1/me', { token: org.apiKey })
  t.equal(good.status, 200, 'a working token from the same address is served')
})
