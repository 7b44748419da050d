// Client ID Metadata Documents: the real MCP SDK client with
// clientMetadataUrl logs in end to end against a local HTTPS server (a self-signed
// certificate made with the openssl CLI, trusted through NIGHTJAR_CIMD_CA_FILE; the
// server's host is allowed through NIGHTJAR_CIMD_ALLOWED_HOSTS), the consent page naming
// the document's host. Refused, each with a page and no redirect: an http URL, a document
// whose client_id is not its URL, a private address not allowed (a literal, IPv4 in IPv6
// too, a localhost name, a name the fetch's own lookup resolves), an oversized document
// and a server too slow to answer. All traffic stays on loopback.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { Page } from 'playwright-core'
import { startTestServer } from '../../helpers/server.ts'
import { authorizeUrl, getPage, launchBrowser, loopbackCallback, pkce } from './helpers.ts'

/** A self-signed certificate for localhost, vm and 127.0.0.1, made with the openssl CLI. */
function selfSigned() {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-cimd-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,DNS:vm,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  return { certFile: join(dir, 'cert.pem'), cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) }
}

class MetadataUrlProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed
  saved: OAuthTokens[] = []
  verifier?: string
  readonly clientMetadataUrl: string
  private readonly redirect: string
  private readonly human: (url: URL) => Promise<void>
  constructor(clientMetadataUrl: string, redirect: string, human: (url: URL) => Promise<void>) {
    this.clientMetadataUrl = clientMetadataUrl
    this.redirect = redirect
    this.human = human
  }
  get redirectUrl() { return this.redirect }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'CIMD Test Client', redirect_uris: [this.redirect], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }
  }
  clientInformation() { return this.info }
  saveClientInformation(info: OAuthClientInformationMixed) { this.info = info }
  tokens() { return this.saved.at(-1) }
  saveTokens(tokens: OAuthTokens) { this.saved.push(tokens) }
  async redirectToAuthorization(url: URL) { await this.human(url) }
  saveCodeVerifier(v: string) { this.verifier = v }
  codeVerifier() { return this.verifier! }
}

t.test('client ID metadata documents', async (t) => {
  const tls = selfSigned()
  const callback = await loopbackCallback(t)
  let fetches = 0
  const docs = new Map<string, () => { status?: number; type?: string; body: string }>()
  const https = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    fetches++
    const doc = docs.get(new URL(req.url ?? '/', 'https://x').pathname)
    if (!doc) return void res.writeHead(404).end()
    if (req.url === '/slow.json') return // never answers: the fetch's deadline must end it
    const d = doc()
    res.writeHead(d.status ?? 200, { 'content-type': d.type ?? 'application/json', 'cache-control': 'max-age=60' }).end(d.body)
  })
  await new Promise<void>((r) => https.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => { https.closeAllConnections(); return new Promise<void>((r) => https.close(() => r())) })
  const port = (https.address() as { port: number }).port
  const url = (host: string, path: string) => `https://${host}:${port}${path}`
  const doc = (clientId: string, over: Record<string, unknown> = {}) => JSON.stringify({
    client_id: clientId, client_name: 'CIMD Test Client', redirect_uris: [callback.redirectUri], token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], ...over,
  })
  const good = url('localhost', '/client.json')
  docs.set('/client.json', () => ({ body: doc(good) }))
  docs.set('/mismatch.json', () => ({ body: doc(url('localhost', '/other.json')) }))
  docs.set('/big.json', () => ({ body: doc(url('localhost', '/big.json'), { padding: 'x'.repeat(8 * 1024) }) }))
  docs.set('/badredirect.json', () => ({ body: doc(url('localhost', '/badredirect.json'), { redirect_uris: ['https://evil.example/cb'] }) }))
  docs.set('/text.json', () => ({ type: 'text/html', body: doc(url('localhost', '/text.json')) }))
  docs.set('/slow.json', () => ({ body: '' }))
  docs.set('/private.json', () => ({ body: doc(url('vm', '/private.json')) }))

  const s = await startTestServer(t, { env: { NIGHTJAR_CIMD_ALLOWED_HOSTS: 'localhost', NIGHTJAR_CIMD_CA_FILE: tls.certFile } })
  const org = await s.bootstrap()
  const browser = await launchBrowser(t)
  const page: Page = await (await browser.newContext()).newPage()

  await t.test('discovery says client_id_metadata_document_supported', async (t) => {
    const meta = await (await fetch(`${s.url}/.well-known/oauth-authorization-server`)).json()
    t.equal(meta.client_id_metadata_document_supported, true)
  })

  await t.test('the MCP SDK client with clientMetadataUrl: consent names the host, code, token, a tool call', async (t) => {
    let consentText = ''
    const provider = new MetadataUrlProvider(good, callback.redirectUri, async (authUrl) => {
      await page.goto(authUrl.href)
      await page.fill('#email', org.email)
      await page.fill('#password', 'correct horse battery')
      await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button[type=submit]')])
      consentText = `${await page.textContent('#client-host .host-site')} | ${await page.textContent('#client-host .host-full')}`
      await page.click('#approve')
    })
    const mcpUrl = new URL(`${s.url}/mcp`)
    const landed = callback.next()
    const err = await new Client({ name: 'cimd', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })).then(() => null, (e: unknown) => e)
    t.ok(err instanceof UnauthorizedError, 'the SDK hands over to the browser')
    t.equal((provider.info as { client_id: string }).client_id, good, 'the client_id is the document URL: no registration')
    const code = (await landed).searchParams.get('code')
    t.match(code, /^[A-Za-z0-9_-]{43}$/)
    t.equal(consentText, `localhost | localhost:${port}`, 'the consent page names the host that publishes the metadata: its site first, then in full')
    t.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: code! }), 'AUTHORIZED')
    t.match(provider.tokens()!.access_token, /^njo_/)
    const client = new Client({ name: 'cimd', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))
    t.teardown(() => client.close())
    t.ok((await client.listTools()).tools.length > 0, 'tools/list with the token')
    const before = fetches
    await getPage(s, authorizeUrl({ clientId: good, redirectUri: callback.redirectUri, challenge: pkce().challenge }))
    t.equal(fetches, before, 'the document is cached by its max-age')
  })

  const refusedPage = async (clientId: string) => {
    const started = Date.now()
    const r = await getPage(s, authorizeUrl({ clientId, redirectUri: callback.redirectUri, challenge: pkce().challenge }))
    return { ...r, ms: Date.now() - started }
  }
  const cases: Array<[string, string, RegExp]> = [
    ['an http URL', `http://localhost:${port}/client.json`, /must use https/],
    ['a client_id that is not the URL', url('localhost', '/mismatch.json'), /client_id does not equal the URL/],
    ['a private address by IP literal, not allowed', url('127.0.0.1', '/client.json'), /address is not public/],
    ['a name resolving to a private address, not allowed (the lookup the socket uses)', url('vm', '/private.json'), /address is not public/],
    ['an oversized document', url('localhost', '/big.json'), /larger than 5120 bytes/],
    ['a redirect URI registration would refuse', url('localhost', '/badredirect.json'), /breaks a registration rule/],
    ['a document that is not application/json', url('localhost', '/text.json'), /not application\/json/],
  ]
  for (const [what, clientId, why] of cases) {
    await t.test(`refused: ${what}`, async (t) => {
      const before = fetches
      const r = await refusedPage(clientId)
      t.equal(r.status, 400)
      t.equal(r.headers.get('location'), null, 'no redirect')
      t.match(r.text, why)
      if (/private/.test(what) || /http URL/.test(what)) t.equal(fetches, before, 'no request reached the server')
    })
  }

  // the deny floor's own reading of an address (contracts/deny-floor.ts), as webhooks and
  // browsers have it: IPv4 carried in IPv6 is judged as IPv4; localhost names are local
  for (const [what, host] of [
    ['loopback as IPv4-compatible IPv6', '[::7f00:1]'],
    ['loopback as IPv4-translated IPv6', '[::ffff:0:7f00:1]'],
    ['the metadata address as IPv4-translated IPv6', '[::ffff:0:a9fe:a9fe]'],
    ['a *.localhost name', 'foo.localhost'],
    ['localhost with a trailing dot (not the allowed host)', 'localhost.'],
  ] as const) {
    await t.test(`refused by the deny floor's rule: ${what}`, async (t) => {
      const before = fetches
      const r = await refusedPage(url(host, '/client.json'))
      t.equal(r.status, 400)
      t.match(r.text, /address is not public/)
      t.equal(fetches, before, 'no request reached the server')
    })
  }

  await t.test('refused: a server too slow to answer, within the fetch deadline', async (t) => {
    const r = await refusedPage(url('localhost', '/slow.json'))
    t.equal(r.status, 400)
    t.match(r.text, /did not arrive within 5 s/)
    t.ok(r.ms < 8000, `answered after the 5 s deadline, not later (${r.ms} ms)`)
  })
})
