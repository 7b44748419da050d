// CDP connect, the caller's door: GET /v1/sessions/:id/cdp upgraded with the caller's own
// Bearer (what connectOverCDP and Puppeteer send), or with a CDP URL token in the path
// (auth/cdp-url-token.ts); /devtools/page/<targetId> after either is that page's endpoint, as
// Chrome serves one (the pod attaches it). Every refusal before the upgrade is the
// REST door's own JSON error, byte for byte; once the pod's CDP socket is open, messages
// are relayed as they are: the filter and the fill lock are at the pod, which holds
// whichever replica relays. Design: docs/sessions.md#how-the-cdp-filter-judges
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocket } from 'ws'
import { closeQuietly, sender } from '../../tunnel/ws-relay.ts'
import { errors, upgradeErrors, upgradeRefusal, type ErrorReply } from '../../contracts/errors.ts'
import { CDP_MAX_BROWSER_MESSAGE, CDP_MAX_CLIENT_MESSAGE, POD_CDP_PATH } from '../../contracts/pod-api.ts'
import { sessionCdp } from '../../contracts/operations/sessions.ts'
import type { PodDirectory } from '../../ports/ports.ts'
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { requireScopes } from '../auth/scopes.ts'
import { unauthorizedFor } from '../door-kit/auth-hook.ts'
import { clientAddress, trustFunction, type TrustFunction } from '../door-kit/client-address.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { addressKey } from '../limits/index.ts'
import { sessionsUnavailable } from '../sessions/runtime.ts'
import { journalLater, type SessionRow } from '../sessions/store.ts'
import { cdpSession } from '../sessions/cdp-access.ts'
import { trackCdpConnection } from '../sessions/cdp-connections.ts'
import { admitUpgrade } from '../door-kit/upgrade-refusal.ts'
import { RelayServer } from '../door-kit/relay-server.ts'
import { controlState } from '../sessions/control.ts'
import { resolveCdpToken } from '../auth/cdp-url-token.ts'

/** the session, then an optional URL token, then an optional Chrome-style endpoint (browser, or a page by target id) */
const PATH = /^\/v1\/sessions\/([^/?#]+)\/cdp(?:\/(njc_[^/?#]+))?(?:\/devtools\/(?:browser(?:\/[^/?#]*)?|page\/([A-Za-z0-9._-]{1,100})))?\/?(?:\?.*)?$/

export class CdpRelay {
  readonly #relayServer = new RelayServer(CDP_MAX_CLIENT_MESSAGE)
  readonly #trust: TrustFunction

  /** `pods` is the session plane's pod directory; a process without one answers the one 503 */
  private readonly deps: Services
  private readonly pods: PodDirectory | undefined
  constructor(deps: Services, pods: PodDirectory | undefined) {
    this.deps = deps
    this.pods = pods
    this.#trust = trustFunction(deps.config.trustedProxies)
  }

  /** Takes an 'upgrade' whose path is a session's CDP endpoint; false for any other path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const m = PATH.exec(req.url ?? '')
    if (!m) return false
    admitUpgrade(socket, this.deps.log, 'cdp', () => this.#admit(req, socket, head, m[1], m[2], m[3]))
    return true
  }

  async #admit(req: IncomingMessage, socket: Duplex, head: Buffer, rawId: string, urlToken: string | undefined, targetId: string | undefined): Promise<void> {
    if (this.#relayServer.closed) throw errors.shuttingDown()
    const auth = await authenticateCdp(this.deps, { header: req.headers.authorization, urlToken, rawId, address: () => clientAddress(req, this.#trust) })
    const sessionId = cdpSessionId(rawId)
    const row = await cdpSession(this.deps, { auth, sessionId })
    if (!this.pods) throw sessionsUnavailable()
    const access = await this.pods.lookup(row.id)
    if (!access) throw errors.sessionNotLive('not live')
    if (socket.destroyed) return

    const page = targetId === undefined ? '' : `?target=${encodeURIComponent(targetId)}`
    const upstream = new WebSocket(access.endpoint.replace(/^http/, 'ws').replace(/\/+$/, '') + POD_CDP_PATH + page, {
      headers: { authorization: `Bearer ${access.token}` },
      maxPayload: CDP_MAX_BROWSER_MESSAGE,
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    })
    let settled = false
    const fail = (reply: ErrorReply) => {
      if (settled) return
      settled = true
      upstream.terminate()
      if (!socket.destroyed) socket.end(upgradeRefusal(reply))
    }
    // the pod's own refusals (a fill ran in this session, no such page) are passed on; anything else is "unavailable"
    upstream.once('unexpected-response', (_r, res) => {
      res.resume()
      const passed = [upgradeErrors.cdpAfterFill(), upgradeErrors.cdpUnknownTarget()].find((e) => e.status === res.statusCode)
      fail(passed ?? upgradeErrors.cdpUnavailable())
    })
    upstream.once('error', () => fail(upgradeErrors.cdpUnavailable()))
    socket.once('close', () => { if (!settled) { settled = true; upstream.terminate() } })
    upstream.once('open', () => {
      if (settled) return upstream.terminate()
      settled = true
      if (this.#relayServer.closed) return fail(upgradeErrors.cdpUnavailable())
      this.#relayServer.wss.handleUpgrade(req, socket, head, (client) => this.#relay(client, upstream, row))
    })
  }

  #relay(client: WebSocket, upstream: WebSocket, row: SessionRow): void {
    const { db, log, activity } = this.deps
    const started = performance.now()
    let messages = 0
    let done = false
    const end = (code: number, reason: string) => {
      if (done) return
      done = true
      clearInterval(watch)
      this.#relayServer.drop(close)
      untrack()
      closeQuietly(client, code, reason)
      closeQuietly(upstream, 1000, '')
      journalLater(db, row, { op: 'cdp_disconnect', outcome: 'ok', detail: { messages }, durationMs: Math.round(performance.now() - started) },
        (err) => log.error({ err }, 'journal write failed'))
    }
    const close = () => end(1001, 'the session ended')
    // a person taking control in the console, on any replica (the row is shared), ends the connection
    let checking = false
    const watch = setInterval(() => {
      if (checking) return
      checking = true
      controlState(db, row.orgId, row.id).then((c) => {
        if (c?.control === 'human') end(1008, 'a person took control of the session')
      }, (err: unknown) => log.warn({ err }, 'cdp: reading control failed')).finally(() => { checking = false })
    }, 1000)
    this.#relayServer.hold(close)
    const untrack = trackCdpConnection(row.id, close)
    journalLater(db, row, { op: 'cdp_connect', outcome: 'ok', detail: {} }, (err) => log.error({ err }, 'journal write failed'))

    const toPod = sender(upstream, client)
    const toClient = sender(client, upstream)
    client.on('message', (data, isBinary) => {
      if (isBinary) return end(1003, 'CDP messages are text')
      messages++
      activity.touch(row.id)
      toPod(data)
    })
    upstream.on('message', (data) => toClient(data))
    client.on('close', () => end(1000, ''))
    upstream.on('close', (code) => end(code === 1001 ? 1001 : 1011, code === 1001 ? 'the session ended' : 'the browser connection closed'))
    client.on('error', () => end(1011, 'error'))
    upstream.on('error', () => end(1011, 'the browser connection failed'))
  }

  /** Closes every CDP connection and refuses new ones (the app is closing). */
  close(): void {
    this.#relayServer.close()
  }
}

/** The session id of a CDP path segment, checked as session_cdp checks its input. */
export function cdpSessionId(rawId: string): string {
  let decoded: string
  try {
    decoded = decodeURIComponent(rawId)
  } catch {
    throw errors.invalidRequest('path is not valid percent-encoded UTF-8')
  }
  assertWellFormed({ sessionId: decoded }, 'path')
  return parseInput(sessionCdp.input, { sessionId: decoded }).sessionId
}

/**
 * The caller of a CDP endpoint: the URL token when the path carries one (good for this
 * session only), else the Bearer credential as the REST door checks it. Failures count
 * against the address; the scope is session_cdp's.
 */
export async function authenticateCdp(
  deps: Services,
  { header, urlToken, rawId, address }: { header: string | undefined; urlToken: string | undefined; rawId: string; address: () => string },
): Promise<AuthContext> {
  const auth = urlToken !== undefined ? await resolveCdpToken(deps, urlToken, cdpSessionId(rawId)) : await deps.bearer.resolve(header)
  if (!auth) {
    const verdict = await deps.limits.bearerAddress.hit(addressKey(address()))
    if (!verdict.allowed) throw errors.bearerFailures(verdict.retryAfterSecs)
    throw unauthorizedFor(deps)
  }
  requireScopes(auth.scopes, sessionCdp.scopes)
  return auth
}
