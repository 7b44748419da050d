// Helpers for the OAuth tests: a controllable clock, form posts, the console login,
// PKCE, a real loopback redirect target and a headless Chromium. The consent page
// is driven over plain HTTP (parse the form, post it back) where a test is about the
// server's rules, and in real Chromium where the browser is the point.
import { createHash, randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import type { Bootstrapped } from '../../../api-server/auth/orgs.ts'
import type { Reply, TestServer } from '../../helpers/server.ts'

export const DEFAULT_SCOPES = ['sessions:write', 'sessions:drive', 'identities:read']
export const DEFAULT_SCOPE = DEFAULT_SCOPES.join(' ')
export const BUILTIN = 'ncli_nightjar_cli'
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** The injectable clock: real time plus whatever the test has advanced. */
/**
 * The service clock of a test: real time plus what the test advanced it by, or — frozen —
 * a fixed instant plus that, when a test counts on a bound to the millisecond (a lockout's
 * last second must not pass while the test's own requests run under load).
 */
export function testClock(opts: { frozen?: boolean } = {}) {
  let offset = 0
  let pausedAt: number | undefined = opts.frozen ? Date.now() : undefined
  return {
    now: () => (pausedAt ?? Date.now()) + offset,
    advance(ms: number) { offset += ms },
    /**
     * Stops real time from moving the clock until resume(): a check "still valid one second
     * before expiry" must not lose that second to a slow request under load.
     */
    pause() { pausedAt ??= Date.now() },
    /** real time moves the clock again, from where it stood (never backwards) */
    resume() {
      if (pausedAt === undefined) return
      offset -= Date.now() - pausedAt
      pausedAt = undefined
    },
  }
}

export async function parse(res: Response): Promise<Reply> {
  const text = await res.text()
  let body: any
  try { body = text ? JSON.parse(text) : undefined } catch { body = undefined }
  return { status: res.status, headers: res.headers, text, body }
}

export async function postForm(s: TestServer, path: string, fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<Reply> {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.set(k, v)
  return parse(await fetch(s.url + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body, redirect: 'manual' }))
}

export async function getPage(s: TestServer, pathOrUrl: string, cookie?: string): Promise<Reply> {
  const url = pathOrUrl.startsWith('http') ? pathOrUrl : s.url + pathOrUrl
  return parse(await fetch(url, { headers: cookie ? { cookie } : {}, redirect: 'manual' }))
}

/** Opens the sign-in page as a browser would: its login-CSRF cookie and form token. */
export async function loginForm(s: TestServer, next = '/console/keys', headers: Record<string, string> = {}): Promise<{ cookie: string; csrf: string; page: Reply }> {
  const page = await parse(await fetch(`${s.url}${s.config.consolePath}/login?next=${encodeURIComponent(next)}`, { headers, redirect: 'manual' }))
  const set = page.headers.getSetCookie().find((c) => c.startsWith('nj_login_csrf='))
  if (!set) throw new Error('no login csrf cookie')
  return { cookie: set.split(';')[0], csrf: hiddenFields(page.text).csrf ?? '', page }
}

/** Posts the sign-in form (after opening it, unless a form is given); the raw reply. */
export async function postLogin(
  s: TestServer,
  fields: { email: string; password: string; next?: string },
  o: { form?: { cookie: string; csrf: string }; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const form = o.form ?? await loginForm(s)
  const cookies = [form.cookie, o.headers?.cookie].filter(Boolean).join('; ')
  return postForm(s, `${s.config.consolePath}/login`, { csrf: form.csrf, next: '/console/keys', ...fields }, { ...o.headers, cookie: cookies })
}

/** Signs in to the console over HTTP; returns the Cookie header value. */
export async function consoleLogin(s: TestServer, who: { email: string; password?: string }): Promise<string> {
  const r = await postLogin(s, { email: who.email, password: who.password ?? 'correct horse battery' })
  if (r.status !== 303) throw new Error(`console login failed with ${r.status}`)
  const set = r.headers.getSetCookie().find((c) => c.startsWith('nj_console='))
  if (!set) throw new Error('no console cookie')
  return set.split(';')[0]
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  return { verifier, challenge }
}

const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** Every hidden input of the page's form (csrf included). */
export function hiddenFields(pageHtml: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of pageHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]] = unescape(m[2])
  return out
}

export interface AuthorizeParams {
  clientId?: string
  redirectUri?: string
  challenge?: string
  state?: string
  workspace?: string
  resource?: string
  scope?: string
}

export function authorizeUrl(p: AuthorizeParams & { challenge: string }): string {
  const q = new URLSearchParams({
    response_type: 'code', client_id: p.clientId ?? BUILTIN, redirect_uri: p.redirectUri ?? 'http://127.0.0.1:9/callback',
    code_challenge: p.challenge, code_challenge_method: 'S256',
  })
  if (p.state !== undefined) q.set('state', p.state)
  if (p.workspace !== undefined) q.set('workspace', p.workspace)
  if (p.resource !== undefined) q.set('resource', p.resource)
  if (p.scope !== undefined) q.set('scope', p.scope)
  return `/oauth/authorize?${q}`
}

/** Shows the consent page as the signed-in human and posts the decision; returns the redirect Location. */
export async function consent(s: TestServer, cookie: string, p: AuthorizeParams & { challenge: string }, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const page = await getPage(s, authorizeUrl(p), cookie)
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}`)
  const fields = hiddenFields(page.text)
  const r = await postForm(s, '/oauth/authorize', { ...fields, decision }, { cookie })
  if (r.status !== 302) throw new Error(`consent post answered ${r.status}`)
  return new URL(r.headers.get('location')!)
}

export interface Tokens { access_token: string; refresh_token: string; token_type: string; expires_in: number; scope: string }

/** The whole authorization-code flow over HTTP for a signed-in human. */
export async function loginTokens(s: TestServer, who: Bootstrapped | { email: string; password?: string }, p: AuthorizeParams = {}, cookie?: string): Promise<Tokens> {
  const c = cookie ?? await consoleLogin(s, who)
  const { verifier, challenge } = pkce()
  const redirectUri = p.redirectUri ?? 'http://127.0.0.1:9/callback'
  const loc = await consent(s, c, { ...p, redirectUri, challenge })
  const code = loc.searchParams.get('code')
  if (!code) throw new Error('no code in the redirect')
  const r = await postForm(s, '/oauth/token', {
    grant_type: 'authorization_code', code, code_verifier: verifier, client_id: p.clientId ?? BUILTIN, redirect_uri: redirectUri, resource: p.resource,
  })
  if (r.status !== 200) throw new Error(`token exchange answered ${r.status} ${r.body?.error}`)
  return r.body
}

export async function refresh(s: TestServer, refreshToken: string, clientId = BUILTIN): Promise<Reply> {
  return postForm(s, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId })
}

export async function me(s: TestServer, token: string): Promise<Reply> {
  return s.request('GET', '/v1/me', { token })
}

/** A real loopback HTTP server standing in for a native client's redirect target. */
export async function loopbackCallback(t: { teardown(fn: () => unknown): void }, path = '/callback') {
  let resolve!: (u: URL) => void
  let next = new Promise<URL>((r) => { resolve = r })
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1')
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>done</title><p id="done">Signed in; you can close this window.</p>')
    if (u.pathname === path) {
      const r = resolve
      next = new Promise<URL>((res2) => { resolve = res2 })
      r(u)
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return { redirectUri: `http://127.0.0.1:${port}${path}`, next: () => next }
}

/** Headless Chromium for the human side of the flows. */
export const launchBrowser = launchTestBrowser

/** Count of log lines (or any text) containing the secret, without ever printing it. */
export function leaks(text: string, ...secrets: string[]): boolean {
  return secrets.some((x) => x && text.includes(x))
}

/**
 * One HTTP request from another loopback source address (127.0.0.2, …): another client
 * address as the server sees it, for per-address limits.
 */
export function requestFrom(s: TestServer, localAddress: string, method: string, path: string, o: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Reply> {
  const body = o.form ? new URLSearchParams(o.form).toString() : undefined
  const headers: Record<string, string | number> = { ...o.headers }
  if (body !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    headers['content-length'] = Buffer.byteLength(body)
  }
  return new Promise((resolve, reject) => {
    const u = new URL(s.url + path)
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, localAddress, headers }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let parsed: any
        try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const x of ([] as string[]).concat(v)) h.append(k, x)
        resolve({ status: res.statusCode ?? 0, headers: h, text, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}
