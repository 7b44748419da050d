// The real MCP SDK client against a cold server: 401 → discovery → dynamic
// registration → authorization in real Chromium (sign in, click Approve) → the
// redirect lands on a loopback server → token → tools/list → a tool call → the access
// token expires (injected clock) → the SDK refreshes on the 401 → works again.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Page } from 'playwright-core'
import { operations } from '../../../api-server/operations/registry.ts'
import { defineOperation } from '../../../api-server/operations/types.ts'
import { startTestServer } from '../../helpers/server.ts'
import { DEFAULT_SCOPE, launchBrowser, leaks, loopbackCallback, testClock } from './helpers.ts'

/** A test-only tool: says who the calling credential is (needs an OAuth default scope). */
const whoami = defineOperation({
  name: 'oauth_test_whoami',
  description: 'test only: the calling principal',
  scopes: ['sessions:drive'],
  input: z.strictObject({}),
  output: z.object({ orgId: z.string(), agentId: z.string(), kind: z.enum(['key', 'oauth', 'console']), grantId: z.string(), scopes: z.array(z.string()) }),
  handler: async ({ auth }) => ({ orgId: auth.orgId, agentId: auth.agentId, kind: auth.principal.kind, grantId: auth.principal.credentialId, scopes: [...auth.scopes].sort() }),
})

/** An in-memory OAuthClientProvider whose "user agent" is a real Chromium page. */
class BrowserProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed
  saved: OAuthTokens[] = []
  verifier?: string
  readonly stateValue = randomBytes(12).toString('base64url')
  private readonly redirect: string
  private readonly human: (url: URL) => Promise<void>
  constructor(redirect: string, human: (url: URL) => Promise<void>) {
    this.redirect = redirect
    this.human = human
  }
  get redirectUrl() { return this.redirect }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Interop Test Client', redirect_uris: [this.redirect], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }
  }
  state() { return this.stateValue }
  clientInformation() { return this.info }
  saveClientInformation(info: OAuthClientInformationMixed) { this.info = info }
  tokens() { return this.saved.at(-1) }
  saveTokens(tokens: OAuthTokens) { this.saved.push(tokens) }
  async redirectToAuthorization(url: URL) { await this.human(url) }
  saveCodeVerifier(v: string) { this.verifier = v }
  codeVerifier() { return this.verifier! }
}

t.test('[INV-05] MCP SDK client: cold start to refreshed access', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now, operations: [...operations, whoami] })
  const org = await s.bootstrap()
  const callback = await loopbackCallback(t)
  const browser = await launchBrowser(t)
  const page: Page = await (await browser.newContext()).newPage()
  const mcpUrl = new URL(`${s.url}/mcp`)

  // every HTTP exchange the SDK makes, in order (method, path, status)
  const seen: string[] = []
  const recordingFetch: FetchLike = async (input, init) => {
    const res = await fetch(input, init)
    const u = new URL(String(input))
    seen.push(`${init?.method ?? 'GET'} ${u.pathname} ${res.status}`)
    return res
  }

  let consentClient = ''
  const provider = new BrowserProvider(callback.redirectUri, async (url) => {
    // the human: follows the authorization URL, signs in, reads the consent page, approves
    await page.goto(url.href)
    await page.fill('#email', org.email)
    await page.fill('#password', 'correct horse battery')
    await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button[type=submit]')])
    consentClient = (await page.textContent('#client-name')) ?? ''
    await page.click('#approve')
  })

  let code = ''
  t.test('[RULE-21] 401 → discovery → DCR → consent in Chromium → code on the loopback server', async (t) => {
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: recordingFetch })
    const client = new Client({ name: 'interop', version: '1.0.0' })
    const nextCallback = callback.next()
    const err = await client.connect(transport).then(() => null, (e: unknown) => e)
    t.ok(err instanceof UnauthorizedError, 'the SDK hands over to the browser (UnauthorizedError)')
    const landed = await nextCallback
    code = landed.searchParams.get('code') ?? ''
    t.match(code, /^[A-Za-z0-9_-]{43}$/)
    t.equal(landed.searchParams.get('state'), provider.stateValue, 'state round-trips')
    t.equal(landed.searchParams.get('iss'), s.url)
    t.equal(consentClient, 'Interop Test Client', 'the consent page named the registered client')
    t.match((provider.info as { client_id: string }).client_id, /^ncli_/, 'registered dynamically')
    t.same(seen.slice(0, 4), [
      'POST /mcp 401',
      'GET /.well-known/oauth-protected-resource/mcp 200',
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/register 201',
    ])
    await transport.close().catch(() => {})
  })

  t.test('auth() exchanges the code for a token pair', async (t) => {
    const result = await auth(provider, { serverUrl: mcpUrl, authorizationCode: code, fetchFn: recordingFetch })
    t.equal(result, 'AUTHORIZED')
    const tokens = provider.tokens()!
    t.match(tokens.access_token, /^njo_/)
    t.match(tokens.refresh_token!, /^njr_/)
    t.equal(tokens.expires_in, 900)
    t.equal(tokens.scope, DEFAULT_SCOPE)
    t.equal(seen.at(-1), 'POST /oauth/token 200')
  })

  t.test('tools/list and a tool call with the access token; expiry; refresh; works again', async (t) => {
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: recordingFetch })
    const client = new Client({ name: 'interop', version: '1.0.0' })
    await client.connect(transport)
    t.teardown(() => client.close())
    const tools = await client.listTools()
    t.ok(tools.tools.some((x) => x.name === 'oauth_test_whoami'), 'tools/list over OAuth')
    const first = await client.callTool({ name: 'oauth_test_whoami', arguments: {} })
    const who = first.structuredContent as any
    t.equal(who.kind, 'oauth')
    t.equal(who.orgId, org.orgId)
    t.match(who.grantId, /^nkey_/)
    t.same(who.scopes, ['identities:read', 'sessions:drive', 'sessions:write'])
    const firstAccess = provider.tokens()!.access_token
    const firstRefresh = provider.tokens()!.refresh_token!

    clock.advance(901_000)
    const stale = await fetch(mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${firstAccess}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) })
    t.equal(stale.status, 401, 'the access token expired on the injected clock')

    const before = seen.length
    const again = await client.callTool({ name: 'oauth_test_whoami', arguments: {} })
    t.equal((again.structuredContent as any).grantId, who.grantId, 'same grant after refresh')
    const during = seen.slice(before)
    t.ok(during.includes('POST /mcp 401'), 'the expired token met a 401')
    t.ok(during.includes('POST /oauth/token 200'), 'the SDK refreshed')
    t.equal(during.at(-1), 'POST /mcp 200', 'and the call went through')
    const now = provider.tokens()!
    t.ok(now.access_token !== firstAccess, 'a new access token')
    t.ok(now.refresh_token !== firstRefresh, 'the refresh token rotated')
    t.notOk(leaks(s.logs(), firstAccess, firstRefresh, now.access_token, now.refresh_token!, code), 'no token or code in the server logs')
  })
})
