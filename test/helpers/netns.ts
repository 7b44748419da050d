// The "public web" for tests: a network namespace holding an HTTP server in 198.18.0.0/15
// (neither loopback, link-local nor RFC 1918, so platform egress treats it as public), named
// example.com and friends through the gateway's hostAliases. Each namespace gets a unique
// name and its own /30, so parallel files do not collide. Needs root and iproute2, and
// throws without them, so tests fail loudly rather than skip.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

import { alive } from './process.ts'

const run = promisify(execFile)
export const PAGES_DIR = fileURLToPath(new URL('../fixtures/pages/', import.meta.url))

export interface Teardown {
  teardown(fn: () => unknown): void
}

export interface SeenRequest {
  method: string
  host: string
  url: string
}

export interface PublicWeb {
  /** namespace name */
  ns: string
  /** the server's address (namespace side), port 80 */
  ip: string
  /** root side of the veth pair */
  hostIp: string
  /** requests the server has seen, in order */
  requests(): Promise<SeenRequest[]>
  close(): Promise<void>
}

async function ip(...args: string[]): Promise<string> {
  return (await run('ip', args)).stdout
}


/** Namespaces left by a test process that died before its teardown. */
async function sweepStale(): Promise<void> {
  const list = await ip('netns', 'list').catch(() => '')
  for (const line of list.split('\n')) {
    const m = /^(njt-(\d+)-[0-9a-f]+)/.exec(line.trim())
    if (m && !alive(Number(m[2]))) await ip('netns', 'del', m[1]).catch(() => {})
  }
}

async function freeSubnet(): Promise<number> {
  const used = await ip('-4', '-o', 'addr', 'show').catch(() => '')
  const taken = (base: number) => used.includes(` 198.18.${base >> 8}.${(base & 255) + 1}/`)
  if (!taken(0)) return 0
  for (let i = 0; i < 64; i++) {
    const base = (randomBytes(2).readUInt16BE(0) & 0xfffc) >>> 0 // a /30 inside 198.18.0.0/16
    if (!taken(base)) return base
  }
  throw new Error('no free /30 in 198.18.0.0/16')
}

// The server runs inside the namespace as `node -e`: static files from PAGES_DIR, plus
// /redirect?to=<url>[&status=N], /echo (returns the request body) and /__requests
// (what it has seen).
const SERVER = String.raw`
const http = require('node:http'), fs = require('node:fs'), path = require('node:path')
const dir = process.env.PAGES_DIR, seen = []
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png' }
http.createServer((req, res) => {
  const u = new URL(req.url, 'http://' + (req.headers.host || 'x'))
  if (u.pathname === '/__requests') { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify(seen)) }
  seen.push({ method: req.method, host: req.headers.host || '', url: req.url })
  if (u.pathname === '/echo') { const b = []; req.on('data', (c) => b.push(c)); return req.on('end', () => { res.writeHead(200, { 'content-type': 'application/octet-stream' }); res.end(Buffer.concat(b)) }) }
  if (u.pathname === '/redirect') { res.writeHead(Number(u.searchParams.get('status') || 302), { location: u.searchParams.get('to') || '/' }); return res.end() }
  const rel = path.normalize(decodeURIComponent(u.pathname === '/' ? '/index.html' : u.pathname)).replace(/^([/\\.])+/, '')
  const file = path.join(dir, rel)
  if (!file.startsWith(dir)) { res.writeHead(403); return res.end() }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404, { 'content-type': 'text/plain' }); return res.end('not found') }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' })
    res.end(data)
  })
}).listen(80, process.env.LISTEN_IP, () => process.stdout.write('ready\n'))
`

export interface Namespace {
  ns: string
  /** the namespace side of the veth pair */
  ip: string
  /** the root side of the veth pair */
  hostIp: string
  /** runs a command inside the namespace (killed at teardown) */
  spawn(command: string, args: string[], env?: Record<string, string>): ChildProcess
  close(): Promise<void>
}

/** A bare namespace joined to the root namespace by a veth /30 in 198.18.0.0/15. */
export async function createNamespace(t: Teardown): Promise<Namespace> {
  if (process.getuid?.() !== 0) throw new Error('netns: network namespaces need root (ip netns)')
  await sweepStale()
  const id = randomBytes(3).toString('hex')
  const ns = `njt-${process.pid}-${id}`
  const vethHost = `nj${id}h`
  const vethNs = `nj${id}n`
  const children: ChildProcess[] = []
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => {
      const exited = new Promise((r) => c.once('exit', r))
      c.kill('SIGKILL')
      return exited
    }))
    await ip('netns', 'del', ns).catch(() => {})
    await ip('link', 'del', vethHost).catch(() => {})
  }
  t.teardown(close)
  try {
    const base = await freeSubnet()
    const hostIp = `198.18.${base >> 8}.${(base & 255) + 1}`
    const nsIp = `198.18.${base >> 8}.${(base & 255) + 2}`
    await ip('netns', 'add', ns)
    await ip('link', 'add', vethHost, 'type', 'veth', 'peer', 'name', vethNs)
    await ip('link', 'set', vethNs, 'netns', ns)
    await ip('addr', 'add', `${hostIp}/30`, 'dev', vethHost)
    await ip('link', 'set', vethHost, 'up')
    await ip('-n', ns, 'addr', 'add', `${nsIp}/30`, 'dev', vethNs)
    await ip('-n', ns, 'link', 'set', vethNs, 'up')
    await ip('-n', ns, 'link', 'set', 'lo', 'up')
    return {
      ns, ip: nsIp, hostIp, close,
      spawn: (command, args, env = {}) => {
        const c = spawn('ip', ['netns', 'exec', ns, command, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
        children.push(c)
        return c
      },
    }
  } catch (e) {
    await close()
    throw new Error(`netns: could not create a namespace (needs root and iproute2): ${(e as Error).message}`)
  }
}

/**
 * A namespace with loopback only — no veth, no route anywhere — holding the given
 * addresses on `lo`. Whatever runs in it can reach those addresses (its own loopback) and
 * nothing else: a connection to any other address fails, it never leaves the machine.
 * Addresses the kernel will not put on an interface (multicast, broadcast) are skipped.
 */
export async function loopbackNamespace(t: Teardown, addresses: string[] = []): Promise<Omit<Namespace, 'ip' | 'hostIp'> & { assigned: string[] }> {
  if (process.getuid?.() !== 0) throw new Error('netns: network namespaces need root (ip netns)')
  await sweepStale()
  const ns = `njt-${process.pid}-${randomBytes(3).toString('hex')}`
  const children: ChildProcess[] = []
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => {
      const exited = new Promise((r) => c.once('exit', r))
      c.kill('SIGKILL')
      return exited
    }))
    await ip('netns', 'del', ns).catch(() => {})
  }
  t.teardown(close)
  await ip('netns', 'add', ns)
  await ip('-n', ns, 'link', 'set', 'lo', 'up')
  const assigned: string[] = []
  for (const a of addresses) {
    const ok = await ip('-n', ns, 'addr', 'add', a.includes(':') ? `${a}/128` : `${a}/32`, 'dev', 'lo').then(() => true, () => false)
    if (ok) assigned.push(a)
  }
  const links = await ip('-n', ns, '-o', 'link', 'show')
  if (links.trim().split('\n').length !== 1) throw new Error(`netns: ${ns} holds more than loopback`)
  return {
    ns, close, assigned,
    spawn: (command, args, env = {}) => {
      const c = spawn('ip', ['netns', 'exec', ns, command, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
      children.push(c)
      return c
    },
  }
}

export async function startPublicWeb(t: Teardown, opts: { pagesDir?: string } = {}): Promise<PublicWeb> {
  const space = await createNamespace(t)
  try {
    const server = space.spawn(process.execPath, ['-e', SERVER], { PAGES_DIR: opts.pagesDir ?? PAGES_DIR, LISTEN_IP: space.ip })
    await waitForLine(server, 'ready', 15_000)
    return {
      ns: space.ns,
      ip: space.ip,
      hostIp: space.hostIp,
      close: space.close,
      requests: async () => {
        // Direct from the test (root namespace), not through any gateway.
        const res = await fetch(`http://${space.ip}/__requests`)
        return (await res.json()) as SeenRequest[]
      },
    }
  } catch (e) {
    await space.close()
    throw new Error(`netns: could not start the "public web" server: ${(e as Error).message}`)
  }
}

/** Resolves when the child prints `marker` on stdout; rejects if it exits first. */
export function waitForLine(child: ChildProcess, marker: string, timeoutMs: number): Promise<void> {
  let stderr = ''
  child.stderr?.on('data', (d) => (stderr += d))
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${marker}" in time: ${stderr.slice(0, 500)}`)), timeoutMs)
    child.stdout!.on('data', (d) => {
      if (String(d).includes(marker)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited (${code}) before "${marker}": ${stderr.slice(0, 500)}`))
    })
  })
}
