// Shared pieces of the browser-pod tests (not a test file itself): run the real pod
// entry as a child process, find its Chromium processes, small HTTP servers.
import type { ApiError } from '../../contracts/errors.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import net from 'node:net'
import { Duplex } from 'node:stream'
import type { Test } from 'tap'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import { PodUsers, type PodUser } from '../../operator/embedded/pod-users.ts'
import type { TunnelDialer } from '../../browser-pod/egress-gateway.ts'
import { waitFor } from '../helpers/wait.ts'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

interface T {
  teardown(fn: () => unknown): void
}

export interface PodProcess {
  child: ChildProcess
  pid: number
  port: number
  endpoint: string
  token: string
  client: PodClient
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * Chromium's sandbox for a pod started inside a test's own process (startPod): that process
 * may be root, where Chromium refuses to run sandboxed, so it runs without there. What these
 * tests hold (perception, refs, fills, frames, CDP) is the same either way; the sandbox
 * itself, and the same features with it on, are proven through pods run as processes
 * (spawnPod, the embedded runtime): test/browser-pod/sandbox.test.ts, test/api-server/sessions/.
 */
export const inProcessSandbox = (): 'chromium' | 'none' => (process.getuid?.() === 0 ? 'none' : 'chromium')

/** whom pods run as when the tests run as root: their own uid each, as in the embedded runtime */
export const podUsers = new PodUsers()
const sharedUsers = new Map<string, PodUser>()

/**
 * Starts `node --import tsx browser-pod/main.ts` and waits for its ready line. As root the
 * pod runs as a uid of its own with its own home, as the embedded runtime runs it.
 */
export async function spawnPod(t: T, env: Record<string, string> = {}): Promise<PodProcess> {
  const token = newToken()
  // pods given one temp folder share a uid, as pods of a service run unprivileged share its
  // uid and temp folder (what cloak's sweep of a dead pod's profile is for); the folder is theirs
  let user = env.TMPDIR ? sharedUsers.get(env.TMPDIR) : undefined
  if (!user) {
    user = podUsers.acquire(`test-pod-${process.pid}-${token.slice(0, 8)}`)
    if (user && env.TMPDIR) {
      chownSync(env.TMPDIR, user.uid, user.gid)
      sharedUsers.set(env.TMPDIR, user)
    }
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'browser-pod/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...(user ? { HOME: user.home, TMPDIR: user.home } : {}), ...env, NIGHTJAR_POD_TOKEN: token },
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!env.TMPDIR) user?.release() // a shared one lives as long as the test file
      resolve({ code, signal })
    }),
  )
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.stdin!.end()
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    await exited
    clearTimeout(timer)
  })
  const ready = await Promise.race([
    // a cloak pod starts Xvfb and a headed Chromium first: on a busy two-core machine that took over 30 s
    waitFor(() => (out.includes('\n') ? out : null), { timeoutMs: 90_000, what: 'pod ready line' }),
    exited.then(({ code }) => {
      throw new Error(`pod exited before ready (code ${code}): ${err}`)
    }),
  ])
  const line = JSON.parse(ready.split('\n')[0]) as { event: string; port: number }
  if (line.event !== 'ready') throw new Error(`unexpected first line: ${ready}`)
  const endpoint = `http://127.0.0.1:${line.port}`
  const client = new PodClient(endpoint, token)
  t.teardown(() => client.close())
  return { child, pid: child.pid!, port: line.port, endpoint, token, client, stdout: () => out, stderr: () => err, exited }
}

/** Every live descendant of `pid` (zombies count as gone). */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (fields[0] === 'Z') continue
      parent.set(Number(name), Number(fields[1]))
    } catch {
      // raced with an exit
    }
  }
  const out: number[] = []
  const queue = [pid]
  while (queue.length) {
    const p = queue.shift()!
    for (const [child, pp] of parent) if (pp === p) { out.push(child); queue.push(child) }
  }
  return out
}

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
  } catch {
    return ''
  }
}

export function environ(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8')
  } catch {
    return ''
  }
}

/** A loopback HTTP server that counts connections (it must see none when refused). */
export async function loopbackServer(t: T, body = 'local server'): Promise<{ port: number; connections: () => number }> {
  let connections = 0
  const sockets = new Set<Socket>()
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<title>${body}</title><p>${body}</p>`)
  })
  server.on('connection', (s) => {
    connections++
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return { port: (server.address() as AddressInfo).port, connections: () => connections }
}

/** hostAliases giving the namespace's server its real-looking names. */
export function publicAliases(ip: string): Record<string, string> {
  return { 'example.com': ip, 'login.example.com': ip, 'www.example.com': ip, 'evil-example.com': ip }
}

/** A stand-in for the daemon tunnel: dials on "the developer's machine" (loopback here)
 * and hands back a plain Duplex, not a net.Socket, like the real tunnel stream. */
export function fakeTunnel(): TunnelDialer & { dials: string[] } {
  const dials: string[] = []
  return {
    dials,
    dial(host, port) {
      dials.push(`${host}:${port}`)
      return new Promise((resolve, reject) => {
        const s = net.connect({ host: '127.0.0.1', port })
        s.once('connect', () => resolve(Duplex.from({ readable: s, writable: s })))
        s.once('error', (e) => reject(Object.assign(new Error('refused'), { code: (e as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? 'refused' : 'error' })))
      })
    },
  }
}

/**
 * An in-process pod (startPod) configured for one platform-egress session whose pages at
 * `host` are `html`, served by a route on its context (no network); closed at teardown.
 */
export async function startPagePod(t: T, sessionId: string, host: string, html: string) {
  // loaded here, not at the top: most users of this harness run the pod as a child process
  const { startPod } = await import('../../browser-pod/pod.ts')
  const logs: string[] = []
  const token = newToken()
  const pod = await startPod({ token, log: (l) => logs.push(l), sandbox: inProcessSandbox() })
  t.teardown(() => pod.close())
  const client = new PodClient(pod.endpoint, token)
  t.teardown(() => client.close())
  await client.configure({ sessionId, egress: { mode: 'platform', declaredHosts: [] } })
  await pod.session.context!.route(`http://${host}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }))
  return { pod, client, logs, token }
}

/**
 * Follows a truncated perceive answer's cursor to its end, each part asked for within
 * `maxChars` (asserted), at most `steps` parts; asserts the walk ends. Returns every part's
 * snapshot, the first one included.
 */
export async function readOnToEnd(
  t: Pick<Test, 'ok' | 'equal'>,
  client: Pick<PodClient, 'drive'>,
  first: { snapshot: string; cursor?: string },
  maxChars: number,
  steps: number,
): Promise<string[]> {
  const read = [first.snapshot]
  let cursor = first.cursor
  for (let i = 0; cursor && i < steps; i++) {
    const next = await client.drive('perceive', { cursor, maxChars })
    t.ok(next.snapshot.length <= maxChars, 'every part within the budget')
    read.push(next.snapshot)
    cursor = next.truncated ? next.cursor : undefined
  }
  t.equal(cursor, undefined, 'the walk ends')
  return read
}

/** the error a call was expected to throw (a call that succeeds fails the test) */
export async function fails(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p
  } catch (e) {
    return e as ApiError
  }
  throw new Error('expected an error')
}
