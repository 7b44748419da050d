// A client's name is the first thing the consent page asks a person to trust: a name that
// shows nothing (three Braille pattern blanks, a filler, a lone mark) is refused at
// registration and in a client metadata document (fetched over real loopback HTTPS), and
// one stored before the rule is written out, isolated, instead of an empty bold name.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer } from '../../helpers/server.ts'
import { authorizeUrl, consoleLogin, getPage, pkce } from './helpers.ts'
import { newId } from '../../../contracts/ids.ts'

const REDIRECT = 'http://127.0.0.1:33418/callback'
const hidden = (cp: string) => `client_name must not contain control, invisible or text-direction characters (found ${cp})`
const BLANK = 'client_name must contain a visible character (not only spaces or invisible characters)'

/** A self-signed certificate for localhost, made with the openssl CLI. */
function selfSigned() {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-client-name-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  return { certFile: join(dir, 'cert.pem'), cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) }
}

t.test('a client name must show something', async (t) => {
  const tls = selfSigned()
  const docs = new Map<string, string>()
  const https = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const body = docs.get(req.url ?? '')
    if (body === undefined) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((r) => https.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => { https.closeAllConnections(); return new Promise<void>((r) => https.close(() => r())) })
  const port = (https.address() as { port: number }).port

  const s = await startTestServer(t, { env: { NIGHTJAR_CIMD_ALLOWED_HOSTS: 'localhost', NIGHTJAR_CIMD_CA_FILE: tls.certFile } })
  const org = await s.bootstrap()
  const register = async (clientName: string) => {
    const r = await fetch(`${s.url}/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: clientName, redirect_uris: [REDIRECT] }),
    })
    return { status: r.status, body: await r.json() }
  }

  await t.test('POST /oauth/register refuses a name that shows nothing', async (t) => {
    const cases: Array<[string, string, string]> = [
      ['three Braille pattern blanks (the probe’s name)', '\u2800\u2800\u2800', hidden('U+2800')],
      ['one Braille pattern blank', '\u2800', hidden('U+2800')],
      ['a Braille blank inside a name', 'Claude\u2800Code', hidden('U+2800')],
      ['the Hangul filler', '\u3164', hidden('U+3164')],
      ['the halfwidth Hangul filler', '\uffa0\uffa0', hidden('U+FFA0')],
      ['a combining mark with nothing under it', '\u0301\u0301', BLANK],
      ['a variation selector alone', '\ufe0f', BLANK],
    ]
    for (const [what, name, words] of cases) {
      t.same(await register(name), { status: 400, body: { error: 'invalid_client_metadata', error_description: words } }, what)
    }
    for (const name of ['Claude Code 🤖', '東京 チーム', 'Mary\u2003Ann']) {
      t.equal((await register(name)).status, 201, `accepted: ${JSON.stringify(name)}`)
    }
  })

  await t.test('a client metadata document is held to the same rule', async (t) => {
    const clientId = `https://localhost:${port}/blank.json`
    docs.set('/blank.json', JSON.stringify({
      client_id: clientId, client_name: '\u2800\u2800\u2800', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    }))
    const r = await getPage(s, authorizeUrl({ clientId, redirectUri: REDIRECT, challenge: pkce().challenge }))
    t.equal(r.status, 400)
    t.equal(r.headers.get('location'), null, 'no redirect')
    t.match(r.text, `its metadata breaks a registration rule (${hidden('U+2800')})`)
  })

  await t.test('a name stored before the rule is written out on the consent page, isolated', async (t) => {
    const cookie = await consoleLogin(s, org)
    for (const [stored, shown] of [['\u2800\u2800\u2800', '[U+2800][U+2800][U+2800]'], ['\u2003', '[U+2003]']]) {
      const id = newId('ncli_')
      await s.testDb.db.query(
        `insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types, scope, created_at) values ($1, $2, $3, $4, $5, $6, now())`,
        [id, stored, [REDIRECT], ['authorization_code', 'refresh_token'], ['code'], 'sessions:write sessions:drive identities:read'],
      )
      const page = await getPage(s, authorizeUrl({ clientId: id, redirectUri: REDIRECT, challenge: pkce().challenge }), cookie)
      t.equal(page.status, 200)
      t.equal(/<strong id="client-name">(.*?)<\/strong>/.exec(page.text)?.[1], `<bdi>${shown}</bdi>`, `${shown}: a bold name a person can see, in its own <bdi>`)
    }
  })
})
