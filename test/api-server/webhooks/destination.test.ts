// Where a webhook may be registered, by the deny floor's one rule (contracts/deny-floor.ts):
// `localhost` in any case, with or without its trailing dot, and every `*.localhost` name
// (RFC 6761) are loopback by name — refused before any lookup, like the addresses they
// stand for, whether or not a resolver would answer for them. No DNS query leaves the test.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'

t.test('webhook registration refuses every spelling of localhost and every *.localhost name', async (t) => {
  const s = await startTestServer(t, {})
  const acme = await s.bootstrap()
  for (const url of [
    'https://LOCALHOST./hooks',
    'https://localhost./hooks',
    'https://LocalHost/hooks',
    'https://foo.localhost/hooks',
    'https://a.b.Localhost./hooks',
    'https://[::ffff:0:7f00:1]/hooks', // loopback, IPv4-translated
    'https://[::7f00:1]/hooks', // loopback, IPv4-compatible
    'https://[::ffff:0:a9fe:a9fe]/hooks', // the metadata address, IPv4-translated
  ]) {
    const r = await s.request('POST', '/v1/webhooks', { token: acme.apiKey, body: { url, events: ['session.live'] } })
    t.equal(r.status, 400, `${url} refused`)
    t.equal(r.body.error?.reason, 'webhook_url_refused')
    t.notOk(r.text.toLowerCase().includes('localhost'), 'the refusal does not echo the host')
  }
  t.equal((await s.request('GET', '/v1/webhooks', { token: acme.apiKey })).body.length, 0, 'nothing was registered')
})
