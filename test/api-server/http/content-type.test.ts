// JSON routes read JSON only (api-server/door-kit/json-only.ts): REST /v1 and MCP answer 415
// to a body in any other content type — a form post or text/plain, which a cross-site
// page can send without a preflight — before it is parsed, and nothing is created. The
// console's own forms and the OAuth form endpoints still read forms.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'

const UNSUPPORTED = { error: { code: 'unsupported_media_type', message: 'unsupported content type' } }

t.test('JSON routes answer 415 to any other content type', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap('acme')
  const auth = { authorization: `Bearer ${org.apiKey}` }
  const post = (path: string, type: string | undefined, body: string, headers: Record<string, string> = {}) =>
    fetch(s.url + path, { method: 'POST', headers: { ...auth, ...(type ? { 'content-type': type } : {}), ...headers }, body })
  const networks = async () => ((await s.request('GET', '/v1/networks', { token: org.apiKey })).body as Array<{ name: string }>).map((n) => n.name)

  await t.test('REST: a form body and text/plain are refused, nothing is created', async (t) => {
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', 'name=formnet'],
      ['text/plain', '{"name":"textnet"}'],
      ['text/plain;charset=UTF-8', '{"name":"textnet"}'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nmultinet\r\n--x--\r\n'],
      ['application/xml', '<name>xmlnet</name>'],
    ] as const) {
      const r = await post('/v1/networks', type, body)
      t.equal(r.status, 415, `${type} → 415`)
      t.same(await r.json(), UNSUPPORTED, `${type}: the catalogue's body`)
    }
    const r = await post('/v1/networks', undefined, 'name=nonet')
    t.equal(r.status, 415, 'a body with no content type → 415')
    t.same(await networks(), [], 'no network was created by any of them')
  })

  await t.test('REST: JSON (any case, with a charset) and bodiless requests still work', async (t) => {
    const a = await post('/v1/networks', 'application/json', JSON.stringify({ name: 'jsonnet' }))
    t.equal(a.status, 201)
    const b = await post('/v1/networks', 'Application/JSON; charset=utf-8', JSON.stringify({ name: 'charsetnet' }))
    t.equal(b.status, 201)
    const id = ((await a.json()) as { network: { id: string } }).network.id
    const del = await fetch(`${s.url}/v1/networks/${id}`, { method: 'DELETE', headers: { ...auth, 'content-type': 'text/plain' } })
    t.equal(del.status, 204, 'a bodiless DELETE with a stray content type is served')
    t.same((await networks()).sort(), ['charsetnet'])
  })

  await t.test('MCP: a form body and text/plain are refused with 415', async (t) => {
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const r = await post('/mcp', type, type === 'text/plain' ? rpc : `jsonrpc=2.0&id=1&method=tools%2Flist`, { accept: 'application/json, text/event-stream' })
      t.equal(r.status, 415, `${type} → 415`)
      t.same(await r.json(), UNSUPPORTED)
    }
    const ok = await post('/mcp', 'application/json', rpc, { accept: 'application/json, text/event-stream' })
    t.equal(ok.status, 200, 'JSON is served')
  })

  await t.test('forms still work where they belong: console sign-in and the OAuth token endpoint', async (t) => {
    const page = await fetch(`${s.url}${s.config.consolePath}/login`)
    const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1]
    t.ok(csrf, 'the sign-in form carries its token')
    const signIn = await fetch(`${s.url}${s.config.consolePath}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: new URL(s.url).origin },
      body: new URLSearchParams({ csrf: csrf!, next: `${s.config.consolePath}/keys`, email: 'owner@acme.test', password: 'correct horse battery' }).toString(),
    })
    t.equal(signIn.status, 303, 'a console form post signs in')
    const token = await fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=nope&client_id=nope&code_verifier=nope&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb',
    })
    t.not(token.status, 415, 'the token endpoint reads its form')
    t.equal(token.status >= 400 && token.status < 500, true, 'and answers the OAuth error for a bad code')
  })
})
