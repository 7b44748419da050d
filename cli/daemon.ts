// `nightjar daemon`: joins a network over the tunnel WebSocket and dials declared hosts on
// this machine for the network's sessions. The join token goes only into the upgrade's
// Authorization header, never printed, logged or in a URL; prefer --network-token-file or
// NIGHTJAR_NETWORK_TOKEN to --network-token, which sits in shell history and `ps`.
//   nightjar daemon --network dev --network-token-file ~/.nightjar/dev.token --control-url wss://…
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import WebSocket from 'ws'
import { hostAllowed } from '../contracts/hosts.ts'
import { DAEMON_ID, MAX_DATA, MAX_FRAME, allocWithHeadroom, type OpenFailReason } from '../tunnel/frames.ts'
import { TunnelSession, type OpenRequest } from '../tunnel/session.ts'
import type { TunnelStream } from '../tunnel/stream.ts'
import { isEntryPoint } from '../contracts/entry-point.ts'
import { UPGRADE_ERRORS, upgradeErrors } from '../contracts/errors.ts'
import { PRODUCT_VERSION } from '../contracts/version.ts'

export interface DaemonOptions {
  network: string
  token: string
  /** control endpoint base (ws/wss/http/https); /ws/control is appended unless present */
  tunnelUrl: string
  /** label in the daemon list */
  host: string
  /** stable id: every reconnect reuses it; absent → the server mints one per connect */
  daemonId?: string
  readyFile?: string
  version?: string
  /** how long to wait for a local TCP connect (kept below the broker's 10 s) */
  dialTimeoutMs?: number
  backoff?: { initialMs: number; maxMs: number }
  /** per-stream receive window */
  window?: number
  /** one progress line (default: stderr) */
  log?: (line: string) => void
}

export class DaemonUsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DaemonUsageError'
  }
}

/** the daemon's line for the service's join 401 (the catalogue's joinUnauthorized: ERR-02) */
export const UNAUTHORIZED_MESSAGE = `join rejected: ${UPGRADE_ERRORS.joinUnauthorized.message} — ${UPGRADE_ERRORS.joinUnauthorized.when}`

/** What a refused join means, in the catalogue's words: "join refused with HTTP 429 (too many failed joins; retry later)". */
export function joinRefusal(status: number | undefined): string {
  const joinRefusals = [upgradeErrors.joinUnauthorized(), upgradeErrors.joinThrottled(0), upgradeErrors.joinNetworkMissing(), upgradeErrors.tunnelUnavailable()]
  const known = joinRefusals.find((e) => e.status === status)
  return `join refused with HTTP ${status ?? '?'}${known ? ` (${known.message})` : ''}`
}

export class DaemonAuthError extends Error {
  constructor() {
    super(UNAUTHORIZED_MESSAGE)
    this.name = 'DaemonAuthError'
  }
}

export const DAEMON_USAGE = `usage: nightjar daemon --network <name> --control-url <ws(s)://host> [options]

  --network <name>             network name or slug to join        (NIGHTJAR_NETWORK)
  --network-token <njt_...>    join token                          (NIGHTJAR_NETWORK_TOKEN)
  --network-token-file <path>  read the join token from a file (keeps it out of shell history)
  --control-url <url>          control channel WS or WSS URL        (NIGHTJAR_CONTROL_URL)
  --daemon-host <label>        label in the daemon list, default unknown (NIGHTJAR_DAEMON_HOST)
  --daemon-id <id>             stable id reused on every reconnect   (NIGHTJAR_DAEMON_ID)
  --ready-file <path>          write "ready" there once registered`

const FLAGS = ['network', 'network-token', 'network-token-file', 'control-url', 'daemon-host', 'daemon-id', 'ready-file'] as const
type Flag = (typeof FLAGS)[number]

/** Flags win over environment variables. Throws DaemonUsageError (never echoing the token). */
export function parseDaemonArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): DaemonOptions {
  const flags: Partial<Record<Flag, string>> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg)
    if (!m) throw new DaemonUsageError(`unexpected argument: ${arg.startsWith('njt_') ? '(a token?)' : arg}`)
    const name = m[1]
    if (name === 'session') throw new DaemonUsageError('--session mode is not supported here; the daemon runs in control mode with --network')
    if (!(FLAGS as readonly string[]).includes(name)) throw new DaemonUsageError(`unknown option --${name}`)
    const value = m[2] ?? argv[++i]
    if (value === undefined || value === '') throw new DaemonUsageError(`--${name} needs a value`)
    flags[name as Flag] = value
  }
  const pick = (flag: Flag, envName: string) => flags[flag] ?? (env[envName] || undefined)

  const network = pick('network', 'NIGHTJAR_NETWORK')
  if (!network) throw new DaemonUsageError('--network (or NIGHTJAR_NETWORK) is required')
  if (network.length > 200) throw new DaemonUsageError('--network: at most 200 characters')

  if (flags['network-token'] && flags['network-token-file']) throw new DaemonUsageError('give --network-token or --network-token-file, not both')
  let token = flags['network-token']
  if (!token && flags['network-token-file']) {
    try {
      token = readFileSync(flags['network-token-file'], 'utf8').trim()
    } catch (e) {
      throw new DaemonUsageError(`cannot read --network-token-file: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
    }
  }
  token ??= env.NIGHTJAR_NETWORK_TOKEN || undefined
  if (!token) throw new DaemonUsageError('a join token is required: --network-token-file, NIGHTJAR_NETWORK_TOKEN or --network-token')
  if (!/^njt_[0-9A-Za-z]+$/.test(token)) throw new DaemonUsageError('the join token is malformed (expected njt_…)')

  const tunnelUrl = pick('control-url', 'NIGHTJAR_CONTROL_URL')
  if (!tunnelUrl) throw new DaemonUsageError('--control-url (or NIGHTJAR_CONTROL_URL) is required')
  tunnelEndpoint(tunnelUrl, network) // validate now, fail before connecting

  const daemonId = pick('daemon-id', 'NIGHTJAR_DAEMON_ID')
  if (daemonId !== undefined && !DAEMON_ID.test(daemonId)) throw new DaemonUsageError('--daemon-id: 1-64 characters of A-Z a-z 0-9 _ . : - (starting with a letter or digit)')

  const host = pick('daemon-host', 'NIGHTJAR_DAEMON_HOST') ?? 'unknown'
  if (host.length > 255 || /[\u0000-\u001f\u007f]/.test(host)) throw new DaemonUsageError('--daemon-host: at most 255 characters, no control characters')

  return {
    network,
    token,
    tunnelUrl,
    host,
    daemonId,
    readyFile: flags['ready-file'],
  }
}

/** {control_url}/ws/control?network=<name>; accepts http(s) too. */
export function tunnelEndpoint(tunnelUrl: string, network: string): URL {
  let u: URL
  try {
    u = new URL(tunnelUrl)
  } catch {
    throw new DaemonUsageError('--control-url is not a URL')
  }
  const proto = { 'ws:': 'ws:', 'wss:': 'wss:', 'http:': 'ws:', 'https:': 'wss:' }[u.protocol]
  if (!proto) throw new DaemonUsageError('--control-url must be a ws:// or wss:// URL')
  u.protocol = proto
  if (!u.pathname.endsWith('/ws/control')) u.pathname = u.pathname.replace(/\/+$/, '') + '/ws/control'
  u.search = ''
  u.hash = ''
  u.searchParams.set('network', network)
  return u
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])
function unmaskedOk(u: URL): boolean {
  return u.protocol === 'wss:' || LOOPBACK.has(u.hostname)
}

/** What a progress line may show of the URL: no userinfo, no query. */
function displayUrl(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname}`
}


function hostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`
}

const MIN_READ = 16 * 1024

function classify(err: NodeJS.ErrnoException): OpenFailReason {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'refused'
    case 'ETIMEDOUT':
      return 'timeout'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
    case 'EAFNOSUPPORT':
      return 'unreachable'
    default:
      return 'error'
  }
}

/** Wait `ms`, or less if the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal.addEventListener('abort', done)
  })
}

interface Outcome {
  registered: boolean
  unauthorized: boolean
  reason: string
  /** the server's Retry-After on a refused join (429, 503), in milliseconds */
  retryAfterMs?: number
}

/** The longest Retry-After the daemon honours: a wrong header must not park it for a day. */
const MAX_RETRY_AFTER_MS = 3_600_000

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(header) ? header[0] : header
  if (!v) return undefined
  const ms = /^\d+$/.test(v.trim()) ? Number(v.trim()) * 1000 : Date.parse(v) - now
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS) : undefined
}

/**
 * Runs until `signal` aborts (resolves) or the join is rejected with 401 (rejects with
 * DaemonAuthError). Every other failure — refused connection, server restart, network
 * drop, dead peer — is retried with exponential backoff and jitter.
 */
export async function runDaemon(opts: DaemonOptions, { signal }: { signal: AbortSignal }): Promise<void> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`nightjar daemon: ${line}\n`))
  const endpoint = tunnelEndpoint(opts.tunnelUrl, opts.network)
  const { initialMs, maxMs } = opts.backoff ?? { initialMs: 500, maxMs: 30_000 }
  const state = { declared: [] as string[], readyWritten: false }
  if (endpoint.protocol === 'ws:' && !LOOPBACK.has(endpoint.hostname)) {
    log('warning: ws:// to a non-loopback host sends the join token and all traffic unencrypted; use wss://')
  }
  let failures = 0
  while (!signal.aborted) {
    log(`connecting to ${displayUrl(endpoint)} (network ${opts.network})`)
    const out = await connectOnce(opts, endpoint, signal, log, state)
    if (out.unauthorized) {
      log(UNAUTHORIZED_MESSAGE)
      throw new DaemonAuthError()
    }
    if (signal.aborted) break
    // a connection that got as far as registering resets the backoff
    failures = out.registered ? 0 : failures + 1
    const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(failures, 16))
    // "equal jitter", and never sooner than the server asked (a throttled join says when)
    const delay = Math.max(Math.round(ceiling / 2 + (Math.random() * ceiling) / 2), out.retryAfterMs ?? 0)
    log(`disconnected: ${out.reason}; reconnecting in ${(delay / 1000).toFixed(1)}s`)
    await pause(delay, signal)
  }
  log('stopped')
}

function connectOnce(
  opts: DaemonOptions,
  endpoint: URL,
  signal: AbortSignal,
  log: (line: string) => void,
  state: { declared: string[]; readyWritten: boolean },
): Promise<Outcome> {
  return new Promise((resolve) => {
    let registered = false
    let settled = false
    let session: TunnelSession | null = null
    const ws = new WebSocket(endpoint, {
      headers: { authorization: `Bearer ${opts.token}` },
      perMessageDeflate: false,
      maxPayload: MAX_FRAME,
      handshakeTimeout: 10_000,
      followRedirects: false, // never replay the token to another origin
      // Masking (RFC 6455 §10.3) protects cleartext intermediaries; under TLS or on
      // loopback there are none, and ws's JavaScript masking costs most of the
      // throughput (Node 20 has no native mask), so those links use a zero key.
      ...(unmaskedOk(endpoint) ? { generateMask: (m: Buffer) => void m.fill(0) } : {}),
    })
    const settle = (o: Omit<Outcome, 'registered'>) => {
      if (settled) return
      settled = true
      signal.removeEventListener('abort', onAbort)
      resolve({ ...o, registered })
    }
    const onAbort = () => {
      if (session) session.close(1000, 'daemon stopping')
      else ws.terminate()
      settle({ unauthorized: false, reason: 'stopping' })
    }
    signal.addEventListener('abort', onAbort)

    ws.on('unexpected-response', (req, res) => {
      res.resume()
      settle({
        unauthorized: res.statusCode === UPGRADE_ERRORS.joinUnauthorized.status,
        reason: joinRefusal(res.statusCode),
        retryAfterMs: retryAfterMs(res.headers['retry-after']),
      })
      req.destroy()
      ws.terminate()
    })
    ws.on('error', (err) => settle({ unauthorized: false, reason: err.message }))
    ws.on('close', (code, why) => settle({ unauthorized: false, reason: `connection closed (${code}${why.length ? ' ' + why.toString() : ''})` }))
    ws.on('open', () => {
      log('connected')
      state.declared = [] // closed by default until this connection's DECLARED_HOSTS
      const s = new TunnelSession(ws, { role: 'daemon', window: opts.window })
      session = s
      s.once('welcome', (w) => {
        registered = true
        log(`registered as ${w.daemonId}`)
        // the broker pings every heartbeatMs; three silent intervals mean it is gone
        s.startHeartbeat(w.heartbeatMs, w.heartbeatMs * 3, false)
        if (opts.readyFile && !state.readyWritten) {
          state.readyWritten = true
          writeReady(opts.readyFile, log)
        }
      })
      s.on('declaredHosts', (hosts) => {
        state.declared = hosts
        log(`declared hosts: ${hosts.length ? hosts.join(', ') : '(none: every dial is refused)'}`)
      })
      s.on('open', (req) => dialLocal(req, state.declared, opts.dialTimeoutMs ?? 5000, log))
      s.on('close', (err) => settle({ unauthorized: false, reason: err?.message ?? 'closed' }))
      s.sendHello({ daemonId: opts.daemonId, host: opts.host, version: opts.version ?? PRODUCT_VERSION })
    })
  })
}

function writeReady(path: string, log: (line: string) => void): void {
  try {
    // write-then-rename so a poller never reads a half-written file
    writeFileSync(path + '.tmp', 'ready')
    renameSync(path + '.tmp', path)
  } catch (e) {
    log(`cannot write --ready-file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
  }
}

/**
 * Dial a declared host on this machine. The list is re-checked here, whatever the server
 * asked for: the daemon is the last guard of the developer's machine.
 */
function dialLocal(req: OpenRequest, declared: readonly string[], timeoutMs: number, log: (line: string) => void): void {
  const host = req.host.toLowerCase()
  const where = hostPort(host, req.port)
  const fail = (reason: OpenFailReason) => {
    log(`dial ${where}: ${reason}`)
    req.reject(reason)
  }
  if (!hostAllowed(host, req.port, declared)) return fail('not_declared')
  let stream: TunnelStream | null = null
  // Read straight into buffers with room for the frame header in front: the tunnel sends
  // each read as one DATA frame without copying it (see allocWithHeadroom). The read size
  // adapts like a TCP receive buffer: it doubles while reads fill it (bulk transfer) and
  // halves after short ones, so an idle socket only holds a small buffer.
  let readSize = MIN_READ
  const sock = net.connect({
    host,
    port: req.port,
    allowHalfOpen: true,
    onread: {
      buffer: () => allocWithHeadroom(readSize),
      callback: (n: number, buf: Uint8Array) => {
        if (n === buf.length) readSize = Math.min(readSize * 2, MAX_DATA)
        else if (n < buf.length / 2) readSize = Math.max(readSize / 2, MIN_READ)
        if (!stream || stream.destroyed) return false
        // false pauses the socket until the stream drains: TCP backpressure to the server
        return stream.write(n === buf.length ? buf : (buf as Buffer).subarray(0, n))
      },
    },
  })
  let connected = false
  const timer = setTimeout(() => {
    sock.destroy()
    fail('timeout')
  }, timeoutMs)
  const onAbort = () => {
    clearTimeout(timer)
    sock.destroy()
  }
  req.signal.addEventListener('abort', onAbort, { once: true })
  sock.on('error', (err) => {
    if (connected) return // handled by the stream wiring below
    clearTimeout(timer)
    req.signal.removeEventListener('abort', onAbort)
    if (!req.signal.aborted) fail(classify(err))
  })
  sock.once('connect', () => {
    connected = true
    clearTimeout(timer)
    req.signal.removeEventListener('abort', onAbort)
    const s = req.accept()
    if (!s) return void sock.destroy()
    stream = s
    sock.setNoDelay(true)
    // half-close travels both ways (FIN ↔ socket end); errors abort both sides (RST)
    sock.on('error', (err) => s.destroy(err))
    s.on('error', () => sock.destroy())
    s.on('drain', () => sock.resume())
    sock.on('end', () => s.end())
    s.pipe(sock)
  })
}

/** CLI entry: returns the process exit code (0 stopped, 1 join rejected, 2 usage). */
export async function daemonMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${DAEMON_USAGE}\n`)
    return 0
  }
  let opts: DaemonOptions
  try {
    opts = parseDaemonArgs(argv, env)
  } catch (e) {
    if (!(e instanceof DaemonUsageError)) throw e
    process.stderr.write(`nightjar daemon: ${e.message}\n\n${DAEMON_USAGE}\n`)
    return 2
  }
  const ac = new AbortController()
  const stop = () => ac.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    await runDaemon(opts, { signal: ac.signal })
    return 0
  } catch (e) {
    if (e instanceof DaemonAuthError) return 1
    throw e
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

// Runnable on its own: node --import tsx cli/daemon.ts --network ...

if (isEntryPoint(import.meta.url)) {
  daemonMain(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`nightjar daemon: ${(e as Error).message}\n`)
      process.exit(1)
    },
  )
}
