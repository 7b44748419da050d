// Real upstream proxies for the session-proxy tests: one process in a
// network namespace the test creates, holding a web site and the proxies in front of it —
// an HTTP CONNECT proxy from npm's `proxy` (open on :3128, Basic auth on :3129) and a
// SOCKS5 proxy from npm's `@pondwader/socks5-server` (username/password on :1080). The
// site records each request's source address, so a test tells a request that came
// through a proxy (the namespace's own address) from one that came direct (the root
// side of the veth); the proxies record the targets they were asked to connect to.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { createNamespace, waitForLine, type Teardown } from './netns.ts'

export const PROXY_USER = 'proxy-user'
export const HTTP_PROXY_PORT = 3128
export const HTTP_AUTH_PROXY_PORT = 3129
export const SOCKS_PROXY_PORT = 1080

export interface ProxyWorld {
  /** the namespace's address: the site (port 80) and every proxy listen here */
  ip: string
  /** the root side of the veth: a request from here came direct, not through a proxy */
  hostIp: string
  /** requests the site saw, with their source address */
  siteRequests(): Promise<{ from: string; host: string; url: string }[]>
  /** CONNECT targets the proxies were asked for (`address:port`), with the proxy's name */
  proxyTargets(): Promise<{ proxy: 'http' | 'http-auth' | 'socks5'; target: string }[]>
}

const require = createRequire(import.meta.url)
const PROXY_LIB = pathToFileURL(require.resolve('proxy')).href
const SOCKS_LIB = pathToFileURL(require.resolve('@pondwader/socks5-server')).href

const WORLD = String.raw`
import http from 'node:http'
const { createProxy } = await import(process.env.PROXY_LIB)
const { createServer: createSocks } = await import(process.env.SOCKS_LIB)
const ip = process.env.LISTEN_IP, user = process.env.PROXY_USER, password = process.env.PROXY_PASSWORD
const seen = [], targets = []
const listen = (server, port) => new Promise((r) => server.listen(port, ip, r))
const site = http.createServer((req, res) => {
  if (req.url === '/__world') { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify({ seen, targets })) }
  seen.push({ from: req.socket.remoteAddress, host: req.headers.host || '', url: req.url })
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
  res.end('<title>the site behind the proxy</title><p>hello</p>')
})
await listen(site, 80)
const open = createProxy(http.createServer())
open.on('connect', (req) => targets.push({ proxy: 'http', target: req.url }))
await listen(open, ${HTTP_PROXY_PORT})
const authed = createProxy(http.createServer())
authed.authenticate = (req) => req.headers['proxy-authorization'] === 'Basic ' + Buffer.from(user + ':' + password).toString('base64')
authed.on('connect', (req) => targets.push({ proxy: 'http-auth', target: req.url }))
await listen(authed, ${HTTP_AUTH_PROXY_PORT})
const socks = createSocks({ auth: { username: user, password } })
socks.setRulesetValidator((conn) => { targets.push({ proxy: 'socks5', target: conn.destAddress + ':' + conn.destPort }); return true })
await listen(socks, ${SOCKS_PROXY_PORT})
process.stdout.write('ready\n')
`

/** The world, torn down with the test; `password` is the credential the authenticated proxies require. */
export async function startProxyWorld(t: Teardown, password: string): Promise<ProxyWorld> {
  const space = await createNamespace(t)
  const child = space.spawn(process.execPath, ['--input-type=module', '-e', WORLD], {
    LISTEN_IP: space.ip, PROXY_LIB, SOCKS_LIB, PROXY_USER, PROXY_PASSWORD: password,
  })
  await waitForLine(child, 'ready', 15_000)
  const world = async () => (await (await fetch(`http://${space.ip}/__world`)).json()) as { seen: []; targets: [] }
  return {
    ip: space.ip,
    hostIp: space.hostIp,
    siteRequests: async () => (await world()).seen,
    proxyTargets: async () => (await world()).targets,
  }
}
