// The pod API: the api-server's only way into the pod (plain node:http; the routes are
// the contract's, contracts/pod-api.ts). Every route but /healthz needs the pod token,
// compared in constant time. It is the pod's response boundary for secrets: every string
// of every reply and log line passes the echo guard, so new routes are covered by
// construction; only fields a route names opaque (binary) are left as they are.
import http from 'node:http'
import type { Duplex } from 'node:stream'
import { createHash, timingSafeEqual } from 'node:crypto'
import { ApiError, errors, upgradeErrors, upgradeRefusal } from '../contracts/errors.ts'
import { POD_CDP_PATH, podRoutes, type PodInput, type PodOutput, type PodRoute, type PodRouteName } from '../contracts/pod-api.ts'
import { actions } from './actions/index.ts'
import { storageState } from './actions/storage.ts'
import { secureType } from './secrets/secure-fill.ts'
import type { CdpProxy } from './cdp-proxy.ts'
import { POD_LIVE_PATH } from '../contracts/operations/live-view.ts'
import { driveContracts } from '../contracts/operations/drive.ts'
import { liveView } from './screencast.ts'
import { recorder } from './recorder.ts'
import { video } from './video.ts'
import type { PodSession } from './session.ts'
import { contextFrom, SpanKind, startSpan, withSpan } from '../telemetry/tracing.ts'

const MAX_BODY = 16 * 1024 * 1024 // a storageState can be large

type Handler<N extends PodRouteName> = (session: PodSession, input: PodInput<N>) => Promise<PodOutput<N>> | PodOutput<N>

/** One handler per route of the contract (contracts/pod-api.ts); a route without one does not compile. */
const handlers: { [N in PodRouteName]: Handler<N> } = {
  health: (s) => ({ ok: true, configured: s.configured, sandbox: s.sandbox }),
  configure: async (s, i) => {
    await s.configure(i)
    return { ok: true, sessionId: i.sessionId, sandbox: s.sandbox }
  },
  // the live view streams nothing while a secret is being typed (screencast.ts), nor takes the video a frame (video.ts)
  secure_type: async (s, i) => {
    const resume = liveView(s).pause()
    const resumeVideo = video(s).pause()
    try {
      return await secureType(s, i)
    } finally {
      resume()
      resumeVideo()
    }
  },
  storage_state: storageState,
  egress_proxy: (s, i) => {
    s.setProxy(i)
    return { ok: true }
  },
  extension_put: async (s, i) => {
    await s.putExtension(i)
    return { ok: true }
  },
  extensions_load: async (s) => ({ ok: true, loaded: await s.loadExtensions() }),
  recording_start: async (s) => {
    await recorder(s).start()
    return { ok: true }
  },
  recording_read: async (s, i) => {
    if (i.flush) await recorder(s).flush()
    return recorder(s).read(i.after)
  },
  video_start: async (s, i) => {
    await video(s).start(i)
    return { ok: true }
  },
  video_finish: (s) => video(s).finish(),
  video_read: (s, i) => video(s).read(i.offset),
  ...actions,
}

/** The agent's calls a live viewer sees as "agent acting": every driving route and the fill. */
const ACTING_PATHS: ReadonlySet<string> = new Set([...driveContracts.map((c) => c.pod.path), podRoutes.secure_type.path])

interface Route extends PodRoute {
  handle: (session: PodSession, input: unknown) => Promise<unknown> | unknown
}

/** The contract's routes by path, each with its handler. */
export const ROUTES: ReadonlyMap<string, Route> = new Map(
  (Object.keys(podRoutes) as PodRouteName[]).map((name) => {
    const r: PodRoute = podRoutes[name]
    return [r.path, { ...r, handle: handlers[name] as Route['handle'] }] as const
  }),
)

export interface PodApiOptions {
  token: string
  session: PodSession
  /** Error log (never given values): defaults to stderr. */
  log?: (line: string) => void
  /** CDP connect: serves the /v1/cdp upgrade (without it, that upgrade is refused 503) */
  cdp?: CdpProxy
}

export function createPodApi(opts: PodApiOptions): http.Server {
  const digest = sha256(opts.token)
  const guard = opts.session.echoGuard
  const write = opts.log ?? ((line: string) => process.stderr.write(line + '\n'))
  const log = (line: string) => write(guard.redact(line))

  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    let path = '?'
    try {
      path = (req.url ?? '').split('?')[0]
      const r = ROUTES.get(path)
      // the health probe answers before the token check (and nobody else does)
      if (r?.auth !== false && !authorized(req.headers.authorization, digest)) throw errors.unauthorized()
      if (!r) throw errors.noSuchRoute()
      if (req.method !== r.method) throw errors.methodNotAllowed(r.method).withHeaders({ allow: r.method })
      const input = parse(r, r.method === 'POST' ? await readBody(req) : Buffer.alloc(0))
      const acted = ACTING_PATHS.has(path) ? liveView(opts.session).acting() : undefined
      try {
        send(res, 200, guard.scrub(await r.handle(opts.session, input), r.opaque))
      } finally {
        acted?.()
      }
    } catch (e) {
      const err = e instanceof ApiError ? e : errors.internal()
      if (!(e instanceof ApiError)) {
        // Unexpected only (typed errors are the caller's answer). Routes that carry
        // secrets log the error's name alone: a message might quote a value.
        const detail = !(e instanceof Error) ? '' : ROUTES.get(path)?.secret ? ` ${e.name}` : ` ${e.name}: ${e.message.split('\n')[0]}`
        log(`pod-api ${path} 500${detail}`)
      }
      if (!res.headersSent) send(res, err.status, guard.scrub(err.toBody()), err.headers)
      else res.destroy()
    }
  }
  // A call that carries a trace (the api-server's driving call, the operator's configure)
  // is one span here, named by its route; probes and untraced calls make none. Attributes:
  // the route and the status — never a body, a selector, typed text or a page's contents.
  const traced = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '').split('?')[0]
    const route = ROUTES.has(path) ? path : 'unmatched'
    const span = startSpan(`pod ${req.method} ${route}`, { kind: SpanKind.SERVER, parent: contextFrom(req.headers.traceparent), attributes: { 'http.request.method': req.method ?? '', 'http.route': route } })
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode)
      span.setAttribute('nightjar.outcome', res.statusCode < 400 ? 'ok' : 'error')
      span.end()
    })
    return withSpan(span, () => serve(req, res))
  }
  // serve answers every error itself (a typed error, or a 500): nothing waits for it
  const server = http.createServer((req, res) => { void (req.headers.traceparent ? traced(req, res) : serve(req, res)) })
  // CDP connect: the one WebSocket route. The token first, as for every route; any other
  // upgrade is dropped.
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    if (!authorized(req.headers.authorization, digest)) return void socket.end(upgradeRefusal(upgradeErrors.cdpPodUnauthorized()))
    // the console's live view (screencast.ts), relayed by the api-server
    if ((req.url ?? '').split('?')[0] === POD_LIVE_PATH) return liveView(opts.session, log).handleUpgrade(req, socket, head)
    if ((req.url ?? '').split('?')[0] !== POD_CDP_PATH) return void socket.destroy()
    if (!opts.cdp) return void socket.end(upgradeRefusal(upgradeErrors.cdpUnavailable()))
    opts.cdp.handleUpgrade(req, socket, head)
  })
  // Live viewers' sockets are upgraded, so neither closeAllConnections nor close reaches
  // them: closing the pod API ends them first (pod.ts closes the CDP proxy itself).
  const closeServer = server.close.bind(server)
  server.close = ((cb?: (err?: Error) => void) => {
    liveView(opts.session).close()
    return closeServer(cb)
  }) as typeof server.close
  // Longer than the client's idle timeout, so the client never reuses a socket the
  // server is about to close.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  return server
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}

/** Constant time over the digests (equal length by construction, so length leaks nothing). */
function authorized(header: string | undefined, digest: Buffer): boolean {
  if (!header || !header.startsWith('Bearer ')) return false
  return timingSafeEqual(sha256(header.slice(7)), digest)
}

/**
 * Compiles every route's parser before the first request. A pod serves one session, so
 * without this each schema would be parsed for the first time on that session's clock:
 * zod builds a parser per object schema on its first parse, and that was half of the
 * pod's CPU for a warm claim (profiled; the claim is on a session start's critical path,
 * sixteen of them at once in a burst). startPod calls it while Chromium launches, when
 * this process is idle anyway. The configure sample reaches its nested objects too.
 */
export function warmParsers(): void {
  for (const r of ROUTES.values()) r.input.safeParse({})
  podRoutes.configure.input.safeParse({ sessionId: 'warm', egress: { mode: 'platform', declaredHosts: ['warm.invalid'] }, viewport: { width: 1280, height: 720 } })
}

/**
 * Runs the request path once before any session claims the pod: a health probe and a
 * configure call with an empty body (refused 400, nothing changes). V8 compiles each
 * function on its first call, and this process serves one session, so without the
 * rehearsal the claim's own configure call paid for compiling the HTTP server's parser,
 * response and socket paths and this module's — on a session start's critical path
 * (profiled: most of a warm claim's pod CPU after warmParsers). startPod runs it once the
 * server listens, before the pod reports ready.
 */
export async function rehearseRequests(endpoint: string, token: string): Promise<void> {
  const call = (path: string, method: string, headers: Record<string, string>, body?: string) =>
    new Promise<void>((resolve) => {
      const req = http.request(new URL(path, endpoint), { method, headers, agent: false }, (res) => {
        res.resume()
        res.on('end', resolve)
        res.on('error', () => resolve())
      })
      req.on('error', () => resolve()) // best effort: a rehearsal that fails changes nothing
      req.end(body)
    })
  await call(podRoutes.health.path, 'GET', {})
  await call(podRoutes.configure.path, 'POST', { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, '{}')
}

function parse(r: Route, raw: Buffer): unknown {
  let body: unknown
  try {
    body = raw.length ? JSON.parse(raw.toString('utf8')) : {}
  } catch {
    throw errors.invalidRequest('body: not JSON')
  } finally {
    raw.fill(0) // the request bytes may hold a secret (secure_type, storageState)
  }
  const parsed = r.input.safeParse(body)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    // issue path + message only: zod messages name types and options, never values
    throw errors.invalidRequest(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`)
  }
  return parsed.data
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_BODY) {
        reject(errors.payloadTooLarge())
        req.destroy()
        return
      }
      chunks.push(c)
    })
    req.on('end', () => {
      const all = Buffer.concat(chunks)
      for (const c of chunks) c.fill(0)
      resolve(all)
    })
    req.on('error', reject)
  })
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(body)
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) })
  res.end(json)
}
