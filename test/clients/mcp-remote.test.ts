// mcp-remote 0.15.1, the stdio bridge desktop MCP hosts run, as published, against a running
// server on loopback: it registers, runs PKCE, prints the authorization URL, and a person
// (Playwright in real Chromium) signs in and approves; then tools, a tool OAuth can never
// grant, and a refresh when the access token has expired. The host side is the MCP SDK
// client over stdio, as a desktop host speaks to the bridge.
import t from 'tap'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { startTestServer, freePort } from '../helpers/server.ts'
import { launchBrowser, testClock } from '../api-server/oauth/helpers.ts'
import { ACCESS_TOKEN_TTL_SECS } from '../../api-server/oauth/constants.ts'

const AUTHORIZE_LINE = /Please authorize this client by visiting:\s*\n(\S+)/g

/** The access token mcp-remote saved (its config directory holds one server's tokens). */
function savedAccessToken(dir: string): string | undefined {
  const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]))
  const file = walk(dir).find((f) => f.endsWith('_tokens.json'))
  return file ? (JSON.parse(readFileSync(file, 'utf8')) as { access_token?: string }).access_token : undefined
}

t.test('[ISSUE-50] [INV-05] mcp-remote: OAuth as a person would, tools it may use, a tool OAuth never grants answers at once, refresh', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now })
  const org = await s.bootstrap()
  const browser = await launchBrowser(t)
  const page = await (await browser.newContext()).newPage()
  const configDir = mkdtempSync(join(tmpdir(), 'mcp-remote-'))
  t.teardown(() => rmSync(configDir, { recursive: true, force: true }))

  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['node_modules/mcp-remote/dist/proxy.js', `${s.url}/mcp`, String(await freePort())],
    // BROWSER: the command xdg-open runs for a URL; `true` opens nothing, so the person below
    // follows the URL mcp-remote prints, as one would with no desktop browser
    env: { ...env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
    stderr: 'pipe',
  })
  const authorizeUrls: string[] = []
  let onUrl: (url: string) => void = () => {}
  let log = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString()
    for (const m of log.matchAll(AUTHORIZE_LINE)) {
      if (authorizeUrls.includes(m[1])) continue
      authorizeUrls.push(m[1])
      onUrl(m[1])
    }
  })
  const firstUrl = new Promise<string>((resolve) => { onUrl = resolve })
  const client = new Client({ name: 'desktop-host', version: '1.0.0' })
  t.teardown(() => client.close())
  const connected = client.connect(transport, { timeout: 45_000 })

  // the person: opens the printed URL, signs in, reads the consent page, approves
  await page.goto(await firstUrl)
  await page.fill('#email', org.email)
  await page.fill('#password', 'correct horse battery')
  await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button[type=submit]')])
  const granted = (await page.textContent('#scopes')) ?? ''
  t.match(granted, /sessions:write[\s\S]*sessions:drive[\s\S]*identities:read/, 'the consent page lists the default set')
  await Promise.all([page.waitForURL(/^http:\/\/(localhost|127\.0\.0\.1):\d+\/oauth\/callback/), page.click('#approve')])
  await connected

  const listed = (await client.listTools()).tools.map((x) => x.name)
  t.ok(listed.includes('identity_list_assumable'), 'a tool of the default set is listed')
  t.notOk(listed.includes('evaluate'), 'evaluate (sessions:evaluate, never granted over OAuth) is not listed')
  const assumable = await client.callTool({ name: 'identity_list_assumable', arguments: {} })
  t.notOk(assumable.isError, 'a granted tool works')

  // a host that calls it anyway (a stale list, a model's guess): a tool error at once, within
  // the request timeout; a 403 challenge would send mcp-remote back to the consent page
  const refused = await client.callTool({ name: 'evaluate', arguments: { sessionId: 'nses_x', expression: '1' } }, undefined, { timeout: 20_000 })
  t.equal(refused.isError, true)
  t.match((refused.structuredContent as { error?: { reason?: string } }).error?.reason, 'scope_not_grantable')
  t.equal(authorizeUrls.length, 1, 'one sign-in, never a second: nothing asked for more scope')

  // the access token expires; mcp-remote refreshes it on the 401 and the call goes through
  const before = savedAccessToken(configDir)
  clock.advance((ACCESS_TOKEN_TTL_SECS + 60) * 1000)
  const after401 = await client.callTool({ name: 'identity_list_assumable', arguments: {} }, undefined, { timeout: 20_000 })
  t.notOk(after401.isError, 'works again after the refresh')
  const after = savedAccessToken(configDir)
  t.ok(before !== undefined && after !== undefined && before !== after, 'a new access token was saved (refreshed)')
  t.equal(authorizeUrls.length, 1, 'the refresh needed no person')
})
