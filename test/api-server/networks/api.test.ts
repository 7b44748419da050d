// Networks, join tokens and the daemon registry over real HTTP and a real daemon.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mintKey } from '../../../api-server/auth/keys.ts'
import { runDaemon, DaemonAuthError } from '../../../cli/daemon.ts'
import { waitFor } from '../../helpers/wait.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import WebSocket from 'ws'

t.test('networks', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const req = (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  const tunnelUrl = s.url.replace('http', 'ws')

  const startDaemon = (network: string, token: string, extra: { daemonId?: string } = {}) => {
    const ac = new AbortController()
    const lines: string[] = []
    const done = runDaemon({ network, token, tunnelUrl, host: 'dev-laptop', ...extra, log: (l) => lines.push(l), backoff: { initialMs: 50, maxMs: 200 } }, { signal: ac.signal })
    done.catch(() => {})
    t.teardown(() => ac.abort())
    return { ac, lines, done }
  }

  t.test('[EP-20] [EP-21] [FLD-38] [FLD-39] [FLD-40] [LIM-11] create and list; the join secret is shown once', async (t) => {
    t.same((await req('GET', '/v1/networks')).body, [], 'empty array when none')
    const r = await req('POST', '/v1/networks', { name: 'dev' })
    t.equal(r.status, 201)
    t.same(Object.keys(r.body).sort(), ['network', 'token'])
    t.same(Object.keys(r.body.network).sort(), ['daemonCount', 'id', 'name', 'onlineDaemonCount'])
    t.match(r.body.network.id, /^nnet_/)
    t.match(r.body.token.tokenId, /^ntok_/)
    t.match(r.body.token.secret, /^njt_/)
    const list = await req('GET', '/v1/networks')
    t.same(list.body, [{ id: r.body.network.id, name: 'dev', daemonCount: 0, onlineDaemonCount: 0, declaredHosts: [] }], 'a fresh network declares nothing')
    t.notOk(list.text.includes(r.body.token.secret), 'the secret is never shown again')
    const rows = await s.testDb.db.query('select * from network_join_tokens')
    t.notOk(JSON.stringify(rows.rows).includes(r.body.token.secret), 'only its hash is stored')
    const dup = await req('POST', '/v1/networks', { name: 'dev' })
    t.equal(dup.status, 409)
  })

  t.test('[ERR-03] [ERR-05] networks:read and networks:write are separate scopes', async (t) => {
    const read = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'r', scopes: ['networks:read'], minterScopes: new Set(['networks:read']) })
    const none = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'n', scopes: ['sessions:drive'], minterScopes: new Set(['sessions:drive']) })
    t.equal((await req('GET', '/v1/networks', undefined, read.secret)).status, 200)
    const w = await req('POST', '/v1/networks', { name: 'x' }, read.secret)
    t.equal(w.status, 403)
    t.equal(w.body.error.message, 'missing required scope: networks:write')
    t.equal((await req('POST', '/v1/networks', { name: 'x' }, 'njk_wrong')).status, 401)
    t.equal((await req('POST', '/v1/networks', { name: 'x' }, '')).status, 401)
    const g = await req('GET', '/v1/networks', undefined, none.secret)
    t.equal(g.status, 403)
    t.equal(g.body.error.message, 'missing required scope: networks:read')
  })

  t.test('[EP-22] declared hosts: ports, IPv6, and clear 400s', async (t) => {
    const n = (await req('POST', '/v1/networks', { name: 'hosts' })).body.network
    const ok = await req('PATCH', `/v1/networks/${n.id}`, { declaredHosts: ['localhost:3000', '127.0.0.1', '::1', '[::1]:8080', '192.168.1.20:80', 'App.Local'] })
    t.equal(ok.status, 200)
    t.same(ok.body.declaredHosts, ['localhost:3000', '127.0.0.1', '[::1]', '[::1]:8080', '192.168.1.20:80', 'app.local'])
    for (const bad of ['http://localhost:3000', 'localhost/path', '*.example.com', 'user@host', '', 'host:99999', 'host:0']) {
      const r = await req('PATCH', `/v1/networks/${n.id}`, { declaredHosts: ['ok.local', bad] })
      t.equal(r.status, 400, `rejects ${JSON.stringify(bad)}`)
      t.match(r.body.error.message, /^invalid request: declaredHosts\.1: must be a host/)
    }
  })

  t.test('[EP-25] [FLD-41] [RULE-12] [LIM-12] [EP-30] a daemon registers; the listing shows it reachable', async (t) => {
    const created = (await req('POST', '/v1/networks', { name: 'laptop' })).body
    t.same((await req('GET', `/v1/networks/${created.network.id}/daemons`)).body, [], 'an empty array: not attached')
    const d = startDaemon('laptop', created.token.secret, { daemonId: 'ndmn_stable1' })
    // as the spec tells a client to wait: until the listing says reachable (its row is written
    // a moment before the broker has welcomed it, and a listing in between says not reachable yet)
    const list = await waitFor(async () => {
      const r = await req('GET', `/v1/networks/${created.network.id}/daemons`)
      return r.body[0]?.reachable ? r.body : null
    }, { what: 'daemon registered and reachable' })
    t.same(Object.keys(list[0]).sort(), ['connectedSince', 'host', 'id', 'reachable', 'version'])
    t.same([list[0].id, list[0].host, list[0].reachable], ['ndmn_stable1', 'dev-laptop', true])
    const net = (await req('GET', '/v1/networks')).body.find((x: any) => x.id === created.network.id)
    t.same([net.daemonCount, net.onlineDaemonCount], [1, 1])
    t.notOk(d.lines.join('\n').includes(created.token.secret), 'the daemon never prints its token')
    d.ac.abort()
    await d.done
    const after = await waitFor(async () => {
      const r = await req('GET', `/v1/networks/${created.network.id}/daemons`)
      return r.body[0]?.reachable === false ? r.body : null
    }, { what: 'daemon offline' })
    t.equal(after.length, 1)
    const again = startDaemon('laptop', created.token.secret, { daemonId: 'ndmn_stable1' })
    const rows = await waitFor(async () => {
      const r = await req('GET', `/v1/networks/${created.network.id}/daemons`)
      return r.body[0]?.reachable ? r.body : null
    }, { what: 'daemon back' })
    t.equal(rows.length, 1, 'a reconnect with the same --daemon-id reuses its row')
    again.ac.abort()
    await again.done
  })

  t.test('[EP-23] [RULE-11] [ERR-02] rotating the token drops the daemon; its rejoin fails with 401', async (t) => {
    const created = (await req('POST', '/v1/networks', { name: 'rotate-me' })).body
    const d = startDaemon('rotate-me', created.token.secret)
    await waitFor(async () => (await req('GET', `/v1/networks/${created.network.id}/daemons`)).body[0]?.reachable, { what: 'registered' })
    const rot = await req('POST', `/v1/networks/${created.network.id}/rotate-token`)
    t.equal(rot.status, 200)
    t.match(rot.body.token.secret, /^njt_/)
    t.not(rot.body.token.secret, created.token.secret)
    const err = await d.done.then(() => null, (e) => e)
    t.ok(err instanceof DaemonAuthError, 'the daemon stops on 401')
    t.ok(d.lines.some((l) => /join rejected: unauthorized/.test(l)))
    const fresh = startDaemon('rotate-me', rot.body.token.secret)
    await waitFor(async () => (await req('GET', `/v1/networks/${created.network.id}/daemons`)).body.some((x: any) => x.reachable), { what: 'rejoined with the new token' })
    fresh.ac.abort()
  })

  t.test('[ERR-02] wrong token, another network’s token and another org’s token are all 401', async (t) => {
    const a = (await req('POST', '/v1/networks', { name: 'a-net' })).body
    const b = (await req('POST', '/v1/networks', { name: 'b-net' })).body
    const g = (await req('POST', '/v1/networks', { name: 'g-net' }, globex.apiKey)).body
    for (const token of [`njt_${'x'.repeat(43)}`, b.token.secret, g.token.secret]) {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const ws = new WebSocket(`${tunnelUrl}/ws/control?network=a-net`, { headers: { authorization: `Bearer ${token}` } })
        ws.on('unexpected-response', (_req, r) => {
          let body = ''
          r.on('data', (d) => (body += d)).on('end', () => resolve({ status: r.statusCode ?? 0, body }))
        })
        ws.on('open', () => reject(new Error('joined with a bad token')))
        ws.on('error', () => {})
      })
      t.equal(res.status, 401)
      t.equal(res.body, 'unauthorized')
    }
    void a
  })

  t.test('[EP-24] deleting a network invalidates its tokens and drops its daemons', async (t) => {
    const created = (await req('POST', '/v1/networks', { name: 'doomed' })).body
    const d = startDaemon('doomed', created.token.secret)
    await waitFor(async () => (await req('GET', `/v1/networks/${created.network.id}/daemons`)).body[0]?.reachable, { what: 'registered' })
    const del = await req('DELETE', `/v1/networks/${created.network.id}`)
    t.equal(del.status, 204)
    const err = await d.done.then(() => null, (e) => e)
    t.ok(err instanceof DaemonAuthError, 'the rejoin is refused')
    t.equal((await req('GET', `/v1/networks/${created.network.id}/daemons`)).status, 404)
  })

  t.test('[AUTH-04] a join token works only on the control channel; an API key is no join token', async (t) => {
    const created = (await req('POST', '/v1/networks', { name: 'planes' })).body
    const asBearer = await s.request('GET', '/v1/me', { token: created.token.secret })
    const bogus = await s.request('GET', '/v1/me', { token: 'njk_' + 'x'.repeat(43) })
    t.equal(asBearer.status, 401)
    t.equal(asBearer.text, bogus.text, 'the same 401 as any bad token')
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${tunnelUrl}/ws/control?network=planes`, { headers: { authorization: `Bearer ${acme.apiKey}` } })
      ws.on('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0))
      ws.on('open', () => resolve(101))
      ws.on('error', () => {})
    })
    t.equal(status, 401)
  })

  t.test('[INV-04] cross-org network ids give byte-identical 404s', async (t) => {
    const mine = (await req('POST', '/v1/networks', { name: 'private' })).body.network
    const unknown = await req('GET', '/v1/networks/nnet_0000000000000000000000/daemons', undefined, globex.apiKey)
    for (const [m, p, b] of [['GET', `/v1/networks/${mine.id}/daemons`], ['PATCH', `/v1/networks/${mine.id}`, { declaredHosts: [] }], ['POST', `/v1/networks/${mine.id}/rotate-token`], ['DELETE', `/v1/networks/${mine.id}`]] as const) {
      const r = await req(m, p, b, globex.apiKey)
      t.equal(r.status, 404)
      t.equal(r.text, unknown.text)
    }
  })

  t.test('[RULE-31] local_reach_ensure creates the backing network and declares the target', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const first = (await mcp.callTool({ name: 'local_reach_ensure', arguments: { target: 'http://localhost:5173/app' } })).structuredContent as any
    t.equal(first.created, true)
    t.equal(first.declared, 'localhost:5173')
    t.same(first.network.declaredHosts, ['localhost:5173'])
    t.match(first.token.secret, /^njt_/)
    const second = (await mcp.callTool({ name: 'local_reach_ensure', arguments: { target: '127.0.0.1:8080' } })).structuredContent as any
    t.equal(second.created, false)
    t.notOk('token' in second)
    t.same(second.network.declaredHosts, ['localhost:5173', '127.0.0.1:8080'])
  })
})
