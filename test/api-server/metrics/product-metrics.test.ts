// The product's series move when the product does: a real server with
// the embedded operator and real browser pods, scraped before and after a start, a sealed
// fill, a refused fill, a refused start, a pod that dies, an OAuth login and the requests
// that wait for a person. docs/observability.md lists every series this reads.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { deviceLogin } from '../../helpers/device-login.ts'
import { scrape } from '../../helpers/prometheus.ts'
import { waitFor } from '../../helpers/wait.ts'

const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-pw'
// a credential name is the customer's words: it must never become a label
const SECRET_NAME = 'ceo-bank-' + Math.random().toString(36).slice(2, 8)

t.test('[ISSUE-38] product metrics', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'login.example.com': web.ip, 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const persona = await createPersona(s, acme.apiKey, { name: 'shopper', credentialName: SECRET_NAME, value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })
  let sessionId = ''

  t.test('[ISSUE-38] a start: counted live, its latency observed, the session live, the warm pool claimed', async (t) => {
    const before = await scrape(s.url)
    for (const name of ['nightjar_session_starts_total', 'nightjar_session_start_duration_seconds', 'nightjar_warm_pool_size', 'nightjar_warm_pool_claims_total', 'nightjar_tunnel_bytes_total', 'nightjar_tunnel_streams_open', 'nightjar_credential_requests_waiting', 'nightjar_human_requests_waiting']) {
      t.ok(before.has(name), `${name} is exported`)
    }
    const r = await api('POST', '/v1/sessions', { identity: persona.identityId })
    t.equal(r.status, 201, 'the session is live')
    sessionId = r.body.id
    const after = await scrape(s.url)
    t.equal(after.value('nightjar_session_starts_total', { outcome: 'live' }) - before.value('nightjar_session_starts_total', { outcome: 'live' }), 1, 'one start counted live')
    t.equal(after.value('nightjar_session_start_duration_seconds_count') - before.value('nightjar_session_start_duration_seconds_count'), 1, 'its latency observed once')
    t.ok(after.value('nightjar_session_start_duration_seconds_sum') > before.value('nightjar_session_start_duration_seconds_sum'), 'and took some time')
    t.equal(after.value('nightjar_sessions_open', { status: 'live' }), 1, 'one live session')
    t.equal(after.value('nightjar_warm_pool_claims_total') - before.value('nightjar_warm_pool_claims_total'), 1, 'the pod was claimed from the pool (a hit) or started cold (a miss)')
    t.same(after.labelValues('nightjar_warm_pool_claims_total', 'result').sort(), ['hit', 'miss'])
  })

  t.test('[ISSUE-38] a refused start counts refused, never live or failed', async (t) => {
    const before = await scrape(s.url)
    const r = await api('POST', '/v1/sessions', { identity: 'nobody-by-this-name' })
    t.equal(r.status, 404)
    const after = await scrape(s.url)
    t.equal(after.value('nightjar_session_starts_total', { outcome: 'refused' }) - before.value('nightjar_session_starts_total', { outcome: 'refused' }), 1)
    t.equal(after.value('nightjar_session_starts_total', { outcome: 'live' }), before.value('nightjar_session_starts_total', { outcome: 'live' }))
    t.equal(after.value('nightjar_session_starts_total', { outcome: 'failed' }), before.value('nightjar_session_starts_total', { outcome: 'failed' }))
  })

  t.test('[ISSUE-38] a sealed fill counts ok, a refused one its code, and the credential name is no label', async (t) => {
    const before = await scrape(s.url)
    t.equal((await api('POST', `/v1/sessions/${sessionId}/navigate`, { url: 'http://login.example.com/fill-check.html' })).status, 200)
    t.equal((await api('POST', `/v1/sessions/${sessionId}/fill-credential`, { credentialName: SECRET_NAME, selector: '#pw' })).status, 200)
    const refused = await api('POST', `/v1/sessions/${sessionId}/fill-credential`, { credentialName: 'no-such-credential', selector: '#pw' })
    t.equal(refused.status, 404)
    // a host off the credential's allowlist: refused at the pod, with a dotted reason
    t.equal((await api('POST', `/v1/sessions/${sessionId}/navigate`, { url: 'http://example.com/fill-check.html' })).status, 200)
    const offOrigin = await api('POST', `/v1/sessions/${sessionId}/fill-credential`, { credentialName: SECRET_NAME, selector: '#pw' })
    t.equal(offOrigin.status, 403)
    const after = await scrape(s.url)
    t.equal(after.value('nightjar_credential_fills_total', { outcome: 'credential.origin_denied' }) - before.value('nightjar_credential_fills_total', { outcome: 'credential.origin_denied' }), 1, 'one fill refused off its origins')
    t.equal(after.value('nightjar_credential_fills_total', { outcome: 'ok' }) - before.value('nightjar_credential_fills_total', { outcome: 'ok' }), 1, 'one fill ok')
    const code = refused.body.error.reason ?? refused.body.error.code
    t.equal(after.value('nightjar_credential_fills_total', { outcome: code }) - before.value('nightjar_credential_fills_total', { outcome: code }), 1, `one fill refused as ${code}`)
    t.notOk(after.text.includes(SECRET_NAME), 'the credential name appears nowhere in /metrics')
    t.notOk(after.text.includes(CANARY), 'nor its value')
    t.notOk(after.text.includes(sessionId), 'nor a session id')
  })

  t.test('[ISSUE-38] requests waiting for a person are gauged', async (t) => {
    const before = await scrape(s.url)
    const human = await api('POST', `/v1/sessions/${sessionId}/request-human`, { reason: 'solve the CAPTCHA' })
    t.equal(human.status, 200)
    const asked = await api('POST', '/v1/credential-requests', { identity: persona.identityId, credentialName: 'second-factor', originAllowlist: ['login.example.com'], reason: 'the bank asks for a one-time code' })
    t.equal(asked.status, 201)
    const after = await scrape(s.url)
    t.equal(after.value('nightjar_human_requests_waiting') - before.value('nightjar_human_requests_waiting'), 1)
    t.equal(after.value('nightjar_credential_requests_waiting') - before.value('nightjar_credential_requests_waiting'), 1)
  })

  t.test('[ISSUE-38] a browser pod that dies: the session fails by reason, the pod failure by cause', async (t) => {
    const before = await scrape(s.url)
    const pod = s.plane!.pods.processes().find((p) => p.sessionId === sessionId)
    t.ok(pod?.pid, 'the session has a pod process')
    process.kill(pod!.pid!, 'SIGKILL')
    await waitFor(async () => (await api('GET', `/v1/sessions/${sessionId}`)).body.status === 'failed', { timeoutMs: 30_000, what: 'the session to fail' })
    const after = await waitFor(async () => {
      const m = await scrape(s.url)
      return m.value('nightjar_session_failures_total') > before.value('nightjar_session_failures_total') && m.value('nightjar_browser_pod_failures_total') > before.value('nightjar_browser_pod_failures_total') ? m : undefined
    }, { what: 'the failure counters' })
    const reason = (await api('GET', `/v1/sessions/${sessionId}`)).body.failureReason
    t.equal(after.value('nightjar_session_failures_total', { reason }) - before.value('nightjar_session_failures_total', { reason }), 1, `one session failure as ${reason}`)
    const causes = after.labelValues('nightjar_browser_pod_failures_total', 'reason')
    t.ok(causes.length >= 1 && causes.every((c) => /^[A-Za-z][A-Za-z0-9_]*$/.test(c)), `the pod failure's cause is a fixed word (${causes.join(', ')})`)
    t.equal(after.value('nightjar_sessions_open', { status: 'live' }), 0, 'no live session remains')
  })

  t.test('[ISSUE-38] OAuth tokens: issued and refused by grant type', async (t) => {
    const before = await scrape(s.url)
    const login = await deviceLogin(s, { email: acme.email, password: acme.password })
    t.ok(login.accessToken.startsWith('njo_'))
    const bogus = await fetch(`${s.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=password&username=a&password=b' })
    t.equal(bogus.status, 400)
    const after = await scrape(s.url)
    const moved = (labels: Record<string, string>) => after.value('nightjar_oauth_tokens_total', labels) - before.value('nightjar_oauth_tokens_total', labels)
    t.equal(moved({ grant_type: 'device_code', outcome: 'issued' }), 1, 'the device login was issued a token')
    t.equal(moved({ grant_type: 'device_code', outcome: 'refused' }), 1, 'its first poll was told to wait')
    t.equal(moved({ grant_type: 'other', outcome: 'refused' }), 1, 'an unsupported grant is refused, under other')
  })
})
