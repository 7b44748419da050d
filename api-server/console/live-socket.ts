// The console's live view, the api-server's hop: GET <console>/sessions/:id/live relays
// the session's pod (/v1/live) to the page, forwarding input only from the person holding
// control. Control lives in Postgres, so a viewer on one replica follows a take-over made
// on another (read every second). Refusals before the upgrade are plain HTTP responses.
// Design: docs/sessions.md#watching-and-taking-over
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import { WebSocket } from 'ws'
import { closeQuietly } from '../../tunnel/ws-relay.ts'
import { errors, isApiError, upgradeErrors, upgradeRefusal, type ErrorReply } from '../../contracts/errors.ts'
import { requireScopes } from '../auth/scopes.ts'
import { LiveInput, POD_LIVE_PATH, type LiveEvent } from '../../contracts/operations/live-view.ts'
import { sessionId as sessionIdField } from '../../contracts/operations/fields.ts'
import type { PodDirectory } from '../../ports/ports.ts'
import type { Services } from '../services.ts'
import { consoleUserOfHeader, type ConsoleUser } from '../door-kit/console-session.ts'
import { sameOriginRequest } from '../door-kit/console-guard.ts'
import { sessionsUnavailable } from '../sessions/runtime.ts'
import { getSession, journalLater, notLive, type SessionRow } from '../sessions/store.ts'
import { controlState } from '../sessions/control.ts'
import { resolveShare, shareStillValid } from '../sessions/shares.ts'
import { admitUpgrade } from '../door-kit/upgrade-refusal.ts'
import { RelayServer } from '../door-kit/relay-server.ts'

/** the scope a console role needs to watch (and to take control) */
export const WATCH_SCOPE = 'sessions:drive'
/** how often a viewer's relay reads the session's control and status */
const CONTROL_POLL_MS = 1000
/** a page this far behind loses frames instead of growing a buffer (it is a live view) */
const MAX_BUFFERED = 4 * 1024 * 1024
/** the largest message the page may send (one input event) */
const MAX_INPUT = 4 * 1024
/** a share-link viewer must say its token this soon after the upgrade */
const SHARE_AUTH_MS = 5000
/** the close a share-link viewer gets for a link that does not work: unknown, revoked, expired, or its session not live */
export const SHARE_INVALID = { code: 4404, reason: 'this share link does not work (expired, revoked, or the session ended)' }

/** who watches: a person of the org (may take control), or the holder of a share link (view only) */
type Viewer = { kind: 'person'; user: ConsoleUser } | { kind: 'share'; shareId: string; orgId: string }

export class LiveViewRelay {
  readonly #relayServer = new RelayServer(MAX_INPUT)
  readonly #path: RegExp
  readonly #sharePath: string

  private readonly deps: Services
  private readonly pods: PodDirectory | undefined
  constructor(deps: Services, pods: PodDirectory | undefined) {
    this.deps = deps
    this.pods = pods
    const base = deps.config.consolePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    this.#path = new RegExp(`^${base}/sessions/([^/?#]+)/live(?:\\?.*)?$`)
    this.#sharePath = `${deps.config.consolePath}/share/live`
  }

  /** Takes an 'upgrade' for a session's live view; false for any other path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if ((req.url ?? '').split('?')[0] === this.#sharePath) {
      socket.on('error', () => socket.destroy())
      this.#admitShare(req, socket, head)
      return true
    }
    const m = this.#path.exec(req.url ?? '')
    if (!m) return false
    admitUpgrade(socket, this.deps.log, 'live view', () => this.#admit(req, socket, head, m[1]))
    return true
  }

  async #admit(req: IncomingMessage, socket: Duplex, head: Buffer, rawId: string): Promise<void> {
    if (this.#relayServer.closed) return refusePlain(socket, upgradeErrors.liveViewUnavailable())
    // the cookie rides along with any page's WebSocket: only our own pages may open one
    if (!sameOriginRequest(this.deps, req as unknown as FastifyRequest)) return refusePlain(socket, upgradeErrors.liveViewCrossOrigin())
    const u = await consoleUserOfHeader(this.deps, req.headers.cookie)
    if (!u) return refusePlain(socket, upgradeErrors.liveViewSignIn())
    requireScopes(u.scopes, [WATCH_SCOPE])
    let id: string
    try {
      id = decodeURIComponent(rawId)
    } catch {
      throw errors.notFound('session')
    }
    // a malformed id is just another unknown session: the one 404
    if (!sessionIdField.safeParse(id).success) throw errors.notFound('session')
    const row = await getSession(this.deps.db, u.orgId, id)
    if (row.status !== 'live') throw notLive(row)
    if (!this.pods) throw sessionsUnavailable()
    const access = await this.pods.lookup(row.id)
    if (!access) return refusePlain(socket, upgradeErrors.liveViewUnavailable())
    const first = await controlState(this.deps.db, u.orgId, row.id)
    if (socket.destroyed || !first) return
    let settled = false
    socket.once('close', () => { settled = true })
    this.#upstream(access, (upstream) => {
      if (settled) return upstream?.terminate()
      settled = true
      if (!upstream || this.#relayServer.closed) {
        upstream?.terminate()
        return refusePlain(socket, upgradeErrors.liveViewUnavailable())
      }
      this.#relayServer.wss.handleUpgrade(req, socket, head, (client) => this.#relay(client, upstream, row, { kind: 'person', user: u }, first))
    })
  }

  /** the pod's live stream, or undefined when it cannot be opened */
  #upstream(access: { endpoint: string; token: string }, then: (ws: WebSocket | undefined) => void): void {
    const upstream = new WebSocket(access.endpoint.replace(/^http/, 'ws').replace(/\/+$/, '') + POD_LIVE_PATH, {
      headers: { authorization: `Bearer ${access.token}` },
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    })
    let done = false
    const fail = () => {
      if (done) return
      done = true
      upstream.terminate()
      then(undefined)
    }
    upstream.once('unexpected-response', (_r, res) => {
      res.resume()
      fail()
    })
    upstream.once('error', fail)
    upstream.once('open', () => {
      if (done) return upstream.terminate()
      done = true
      then(upstream)
    })
  }

  /**
   * A share-link viewer: the upgrade is accepted first (the token is in the link's fragment,
   * never in a URL a server logs), then the first message must carry the token. Every way a
   * link can fail closes alike with SHARE_INVALID.
   */
  #admitShare(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#relayServer.closed) return refusePlain(socket, upgradeErrors.liveViewUnavailable())
    if (!sameOriginRequest(this.deps, req as unknown as FastifyRequest)) return refusePlain(socket, upgradeErrors.liveViewCrossOrigin())
    this.#relayServer.wss.handleUpgrade(req, socket, head, (client) => {
      const invalid = () => closeQuietly(client, SHARE_INVALID.code, SHARE_INVALID.reason)
      const timer = setTimeout(invalid, SHARE_AUTH_MS)
      client.once('close', () => clearTimeout(timer))
      client.once('message', (data, isBinary) => {
        clearTimeout(timer)
        let token = ''
        try {
          const m = JSON.parse(isBinary ? '' : data.toString('utf8'))
          if (m?.type === 'auth' && typeof m.token === 'string') token = m.token
        } catch {
          // not JSON: no token, the link does not work
        }
        void this.#openShare(client, token).catch((e) => {
          if (!isApiError(e)) this.deps.log.error({ err: e }, 'live view share failed')
          invalid()
        })
      })
    })
  }

  async #openShare(client: WebSocket, token: string): Promise<void> {
    const { db, now } = this.deps
    const invalid = () => closeQuietly(client, SHARE_INVALID.code, SHARE_INVALID.reason)
    const share = await resolveShare(db, token, now())
    if (!share) return invalid()
    const row = await getSession(db, share.orgId, share.sessionId)
    const first = await controlState(db, share.orgId, row.id)
    const access = row.status === 'live' && this.pods ? await this.pods.lookup(row.id) : undefined
    if (!access || !first) return invalid()
    this.#upstream(access, (upstream) => {
      if (!upstream || client.readyState !== WebSocket.OPEN || this.#relayServer.closed) {
        upstream?.terminate()
        return invalid()
      }
      this.#relay(client, upstream, row, { kind: 'share', shareId: share.id, orgId: share.orgId }, first)
    })
  }

  #relay(client: WebSocket, upstream: WebSocket, row: SessionRow, viewer: Viewer, first: NonNullable<Awaited<ReturnType<typeof controlState>>>): void {
    const { db, log, activity, now } = this.deps
    const orgId = viewer.kind === 'person' ? viewer.user.orgId : viewer.orgId
    const userId = viewer.kind === 'person' ? viewer.user.userId : undefined
    const who = viewer.kind === 'person' ? { userId } : { shareId: viewer.shareId }
    const journalError = (err: unknown) => log.error({ err }, 'journal write failed')
    let control = first
    let frames = 0
    let inputs = 0
    let done = false
    const send = (e: LiveEvent) => { if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(e)) }
    // a share-link viewer is told nothing about who holds control (a person's e-mail is the org's business)
    const tellControl = () => { if (userId) send({ type: 'control', control: control.control, holder: control.holderEmail, mine: control.control === 'human' && control.holder === userId }) }
    const end = (code: number, reason: string) => {
      if (done) return
      done = true
      clearInterval(poll)
      this.#relayServer.drop(close)
      closeQuietly(client, code, reason)
      closeQuietly(upstream, 1000, '')
      journalLater(db, row, { op: 'live_view_close', outcome: 'ok', detail: { ...who, frames, inputs } }, journalError)
    }
    const close = () => end(1001, 'the server is closing')
    this.#relayServer.hold(close)
    journalLater(db, row, { op: 'live_view_open', outcome: 'ok', detail: who }, journalError)
    tellControl()

    let polling = false
    const poll = setInterval(() => {
      if (polling) return
      polling = true
      Promise.all([controlState(db, orgId, row.id), viewer.kind === 'share' ? shareStillValid(db, viewer.shareId, now()) : true]).then(([state, shareOk]) => {
        if (!state || state.status !== 'live') {
          send({ type: 'ended' })
          return end(1000, 'the session ended')
        }
        // a revoked or expired link stops within a poll
        if (!shareOk) return end(SHARE_INVALID.code, SHARE_INVALID.reason)
        const changed = state.control !== control.control || state.holder !== control.holder
        control = state
        if (changed) tellControl()
      }, (err: unknown) => log.warn({ err }, 'live view: reading control failed')).finally(() => { polling = false })
    }, CONTROL_POLL_MS)

    upstream.on('message', (data, isBinary) => {
      if (isBinary || client.readyState !== WebSocket.OPEN) return
      // frames are the bulk: a page that cannot keep up skips some, never the page state
      const text = data.toString('utf8')
      if (text.startsWith('{"type":"frame"')) {
        if (client.bufferedAmount > MAX_BUFFERED) return
        frames++
      }
      client.send(text)
    })
    client.on('message', (data, isBinary) => {
      // input only from the person holding control, as read from the shared store
      if (isBinary || !userId || !(control.control === 'human' && control.holder === userId)) return
      let raw: unknown
      try {
        raw = JSON.parse(data.toString('utf8'))
      } catch {
        return
      }
      const parsed = LiveInput.safeParse(raw)
      if (!parsed.success || upstream.readyState !== WebSocket.OPEN) return
      inputs++
      activity.touch(row.id)
      upstream.send(JSON.stringify(parsed.data))
    })
    client.on('close', () => end(1000, ''))
    upstream.on('close', () => {
      send({ type: 'ended' })
      end(1000, 'the browser connection closed')
    })
    client.on('error', () => end(1011, 'error'))
    upstream.on('error', () => end(1011, 'the browser connection failed'))
  }

  /** Closes every live view and refuses new ones (the app is closing). */
  close(): void {
    this.#relayServer.close()
  }
}

function refusePlain(socket: Duplex, reply: ErrorReply): void {
  if (!socket.destroyed) socket.end(upgradeRefusal(reply))
}
