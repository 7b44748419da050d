// The node API: the api-server's only way into the pod. Plain node:http (one hop less
// than a framework; the route table is tiny). JSON in and out, errors as
// {"error":{code,message,reason?}}. Every route except GET /healthz needs
// `Authorization: Bearer <node token>`, compared in constant time.
//
// This is also the pod's response boundary for secrets: every string of every reply
// (results and errors alike, object keys included) and every log line passes the
// session's echo guard, which masks any secret this session has filled wherever the
// page echoed it (echo-guard.ts). New routes are covered by construction; only fields
// a route names as opaque (binary payloads) are left as they are.
import http from 'node:http'
import { createHash, timingSafeEqual } from 'node:crypto'
import type { z } from 'zod'
import { ApiError, badRequest, notFound, unauthorized } from '../contracts/errors.ts'
import * as C from './contract.ts'
import { act, hover, selectOption, waitFor } from './actions/act.ts'
import { consoleMessages, pdf, screenshot } from './actions/capture.ts'
import { goBack, navigate, reload } from './actions/navigation.ts'
import { storageState } from './actions/storage.ts'
import { perceive } from './perception.ts'
import { secureType } from './secure-fill.ts'
import type { PodSession } from './session.ts'

const MAX_BODY = 16 * 1024 * 1024 // a storageState can be large

interface Route<S extends z.ZodType = z.ZodType> {
  schema: S
  handle: (session: PodSession, input: z.infer<S>) => Promise<unknown> | unknown
  /** Routes carrying secrets never log error details. */
  secret?: boolean
  /** Top-level result fields the echo guard leaves alone: base64 pixels or PDF bytes, or a sealed-at-once auth-state. */
  opaque?: readonly string[]
}

const route = <S extends z.ZodType>(schema: S, handle: Route<S>['handle'], secret = false, opaque?: readonly string[]): Route =>
  ({ schema, handle, secret, opaque } as Route)

export const ROUTES: Record<string, Route> = {
  '/v1/configure': route(C.ConfigureInput, async (s, i) => {
    await s.configure(i)
    return { ok: true, sessionId: i.sessionId }
  }, true),
  '/v1/navigate': route(C.NavigateInput, navigate),
  '/v1/perceive': route(C.Empty, (s) => perceive(s)),
  '/v1/act': route(C.ActInput, act),
  '/v1/screenshot': route(C.ScreenshotInput, screenshot, false, ['png']),
  '/v1/pdf': route(C.Empty, (s) => pdf(s), false, ['pdf']),
  '/v1/console': route(C.Empty, (s) => consoleMessages(s)),
  '/v1/go_back': route(C.HistoryInput, goBack),
  '/v1/reload': route(C.HistoryInput, reload),
  '/v1/wait_for': route(C.WaitForInput, waitFor),
  '/v1/select_option': route(C.SelectOptionInput, selectOption),
  '/v1/hover': route(C.HoverInput, hover),
  // credential-equivalent, and never shown to anyone: the api-server seals it at once (a
  // warm resume must restore a cookie that holds the secret exactly, not its mask)
  '/v1/storage_state': route(C.Empty, (s) => storageState(s), true, ['cookies', 'origins', 'sessionStorage']),
  '/v1/secure_type': route(C.SecureTypeInput, secureType, true),
}

export interface NodeApiOptions {
  token: string
  session: PodSession
  /** Error log (never given values): defaults to stderr. */
  log?: (line: string) => void
}

export function createNodeApi(opts: NodeApiOptions): http.Server {
  const digest = sha256(opts.token)
  const guard = opts.session.echoGuard
  const write = opts.log ?? ((line: string) => process.stderr.write(line + '\n'))
  const log = (line: string) => write(guard.redact(line))

  const server = http.createServer(async (req, res) => {
    let path = '?'
    try {
      path = (req.url ?? '').split('?')[0]
      if (path === '/healthz') {
        if (req.method !== 'GET') throw new ApiError(405, 'bad_request', 'method not allowed')
        return send(res, 200, { ok: true, configured: opts.session.configured })
      }
      if (!authorized(req.headers.authorization, digest)) throw unauthorized()
      const r = ROUTES[path]
      if (!r) throw notFound('route')
      if (req.method !== 'POST') throw new ApiError(405, 'bad_request', 'method not allowed')
      const input = parse(r, await readBody(req))
      send(res, 200, guard.scrub(await r.handle(opts.session, input), r.opaque))
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(500, 'internal', 'internal error')
      if (!(e instanceof ApiError)) {
        // Unexpected only (typed errors are the caller's answer). Routes that carry
        // secrets log the error's name alone: a message might quote a value.
        const detail = !(e instanceof Error) ? '' : ROUTES[path]?.secret ? ` ${e.name}` : ` ${e.name}: ${e.message.split('\n')[0]}`
        log(`node-api ${path} 500${detail}`)
      }
      if (!res.headersSent) send(res, err.status, guard.scrub(err.toBody()))
      else res.destroy()
    }
  })
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

function parse(r: Route, raw: Buffer): unknown {
  let body: unknown
  try {
    body = raw.length ? JSON.parse(raw.toString('utf8')) : {}
  } catch {
    throw badRequest('body is not JSON')
  } finally {
    raw.fill(0) // the request bytes may hold a secret (secure_type, storageState)
  }
  const parsed = r.schema.safeParse(body)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    // issue path + message only: zod messages name types and options, never values
    throw badRequest(`invalid request: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`)
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
        reject(new ApiError(413, 'bad_request', 'body too large'))
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

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) })
  res.end(json)
}
