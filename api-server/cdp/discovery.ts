// CDP discovery as Chrome serves it, under a session's CDP endpoint: /json/version,
// /json/list (/json), /json/protocol, /json/new, /json/activate, /json/close, so clients
// that start from an HTTP URL (Puppeteer's browserURL, connectOverCDP('http://…'),
// chrome-remote-interface, agent-browser) connect. Answers come from the session's own
// browser through the pod's filter (Chromium's own pages never listed; /json/new judged like
// Target.createTarget). Design: docs/sessions.md#cdp-discovery-and-url-tokens
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { WebSocket } from 'ws'
import { errors } from '../../contracts/errors.ts'
import { CDP_MAX_BROWSER_MESSAGE, POD_CDP_PATH } from '../../contracts/pod-api.ts'
import type { PodDirectory } from '../../ports/ports.ts'
import type { Services } from '../services.ts'
import { sessionsUnavailable } from '../sessions/runtime.ts'
import { cdpSession } from '../sessions/cdp-access.ts'
import type { SessionRow } from '../sessions/store.ts'
import { authenticateCdp, cdpSessionId } from './relay.ts'
import { CDP_TOKEN_SEGMENT } from '../auth/cdp-url-token.ts'

const BASE = '/v1/sessions/:sessionId/cdp'

/** URL tokens taken off request paths before Fastify (its access log, traces) sees them. */
const urlTokens = new WeakMap<IncomingMessage, string>()

/**
 * Moves a CDP URL token out of a request's path (/v1/sessions/<id>/cdp/njc_…/json/…) into
 * urlTokens, so nothing that logs or traces the URL ever holds it. Runs first on every request.
 */
function takeUrlToken(req: IncomingMessage): void {
  const url = req.url ?? ''
  const m = /^(\/v1\/sessions\/[^/?#]+\/cdp)\/(njc_[^/?#]*)(\/[^?#]*)?(\?.*)?$/.exec(url)
  if (!m) return
  // an ill-formed token is kept out of the log too: the route then answers 401
  urlTokens.set(req, CDP_TOKEN_SEGMENT.test(m[2]) ? m[2] : 'njc_')
  req.url = `${m[1]}${m[3] ?? ''}${m[4] ?? ''}`
}

interface Endpoint {
  row: SessionRow
  /** ws(s)://…/v1/sessions/<id>/cdp, with the caller's URL token when it came with one */
  wsBase: string
}

/** One CDP command's answer from the pod. */
type Answer = { result?: Record<string, any>; error?: { message?: string } }

/**
 * Runs CDP commands, one after another, on a connection of its own to the session's pod
 * (the filter judges them as any client's; a page's id makes it that page's endpoint).
 */
function podCommands(pods: PodDirectory, row: SessionRow, commands: Array<{ method: string; params?: Record<string, unknown> }>): Promise<Answer[]> {
  return pods.lookup(row.id).then((access) => new Promise<Answer[]>((resolve, reject) => {
    if (!access) return reject(errors.sessionNotLive('not live'))
    const ws = new WebSocket(access.endpoint.replace(/^http/, 'ws').replace(/\/+$/, '') + POD_CDP_PATH, {
      headers: { authorization: `Bearer ${access.token}` }, maxPayload: CDP_MAX_BROWSER_MESSAGE, perMessageDeflate: false, handshakeTimeout: 10_000,
    })
    const answers: Answer[] = []
    const timer = setTimeout(() => fail(), 15_000)
    const fail = () => {
      clearTimeout(timer)
      ws.terminate()
      reject(errors.cdpDiscoveryUnavailable())
    }
    const next = () => {
      if (answers.length === commands.length) {
        clearTimeout(timer)
        ws.close()
        return resolve(answers)
      }
      ws.send(JSON.stringify({ id: answers.length + 1, ...commands[answers.length] }))
    }
    ws.once('unexpected-response', (_r, res) => { res.resume(); fail() })
    ws.once('error', fail)
    ws.once('open', next)
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as Answer & { id?: number; sessionId?: string }
      if (msg.sessionId !== undefined || msg.id !== answers.length + 1) return
      answers.push({ result: msg.result, error: msg.error })
      next()
    })
  }))
}

let protocol: string | undefined
/** The protocol Chromium's DevTools describe (devtools-protocol, the copy Puppeteer pins to its Chromium), as Chrome's /json/protocol. */
function protocolJson(): string {
  if (protocol) return protocol
  const require = createRequire(import.meta.url)
  const browser = JSON.parse(readFileSync(require.resolve('devtools-protocol/json/browser_protocol.json'), 'utf8')) as { version: unknown; domains: unknown[] }
  const js = JSON.parse(readFileSync(require.resolve('devtools-protocol/json/js_protocol.json'), 'utf8')) as { domains: unknown[] }
  protocol = JSON.stringify({ version: browser.version, domains: [...browser.domains, ...js.domains] }, null, 2)
  return protocol
}

interface TargetInfo {
  targetId: string
  type: string
  title: string
  url: string
}

/** A /json/list entry as Chrome writes one, its webSocketDebuggerUrl through this server. */
function listEntry(ep: Endpoint, t: TargetInfo) {
  return { description: '', id: t.targetId, title: t.title, type: t.type, url: t.url, webSocketDebuggerUrl: `${ep.wsBase}/devtools/page/${t.targetId}` }
}

function json(reply: FastifyReply, body: unknown): FastifyReply {
  return reply.header('content-type', 'application/json; charset=UTF-8').send(typeof body === 'string' ? body : JSON.stringify(body, null, 2))
}

/** The CDP error of a command the filter refused, as the catalogue's refusal. */
function answered(a: Answer | undefined): Record<string, any> {
  if (a?.error) throw errors.cdpRefused(a.error.message ?? 'refused')
  return a?.result ?? {}
}

/** Registers the discovery routes, and the hook that keeps URL tokens out of every log. */
export function registerCdpDiscovery(app: FastifyInstance, services: Services, pods: PodDirectory | undefined): void {
  app.server.prependListener('request', takeUrlToken)

  const endpoint = async (req: FastifyRequest): Promise<Endpoint> => {
    const rawId = (req.params as { sessionId: string }).sessionId
    const urlToken = urlTokens.get(req.raw)
    const auth = await authenticateCdp(services, { header: urlToken === undefined ? req.headers.authorization : undefined, urlToken, rawId: encodeURIComponent(rawId), address: () => req.ip })
    const row = await cdpSession(services, { auth, sessionId: cdpSessionId(encodeURIComponent(rawId)) })
    if (!pods) throw sessionsUnavailable()
    const wsBase = `${services.config.baseUrl.replace(/^http/, 'ws')}/v1/sessions/${encodeURIComponent(row.id)}/cdp${urlToken === undefined ? '' : `/${urlToken}`}`
    return { row, wsBase }
  }
  const run = (ep: Endpoint, commands: Array<{ method: string; params?: Record<string, unknown> }>) => podCommands(pods!, ep.row, commands)
  const both = (path: string) => [`${BASE}${path}`, `${BASE}${path}/`]

  for (const url of both('/json/version')) {
    app.get(url, async (req, reply) => {
      const ep = await endpoint(req)
      const [v] = await run(ep, [{ method: 'Browser.getVersion' }])
      const r = answered(v)
      return json(reply, {
        Browser: r.product, 'Protocol-Version': r.protocolVersion, 'User-Agent': r.userAgent, 'V8-Version': r.jsVersion,
        'WebKit-Version': `537.36 (${String(r.revision)})`, webSocketDebuggerUrl: ep.wsBase,
      })
    })
  }
  for (const url of [...both('/json'), ...both('/json/list')]) {
    app.get(url, async (req, reply) => {
      const ep = await endpoint(req)
      const [list] = await run(ep, [{ method: 'Target.getTargets' }])
      const infos = (answered(list).targetInfos ?? []) as TargetInfo[]
      // pages first, as Chrome lists them
      const sorted = [...infos.filter((t) => t.type === 'page'), ...infos.filter((t) => t.type !== 'page')]
      return json(reply, sorted.map((t) => listEntry(ep, t)))
    })
  }
  for (const url of both('/json/protocol')) {
    app.get(url, async (req, reply) => {
      await endpoint(req)
      return json(reply, protocolJson())
    })
  }
  // Chrome takes the new tab's URL as the whole query (PUT since Chrome 111; GET still accepted here)
  for (const url of both('/json/new')) {
    app.route({
      method: ['GET', 'PUT'], url, handler: async (req, reply) => {
        const ep = await endpoint(req)
        const q = req.url.indexOf('?')
        let target = 'about:blank'
        try {
          if (q >= 0 && q < req.url.length - 1) target = decodeURIComponent(req.url.slice(q + 1))
        } catch {
          throw errors.invalidRequest('url: not valid percent-encoded UTF-8')
        }
        const [created, list] = await run(ep, [{ method: 'Target.createTarget', params: { url: target } }, { method: 'Target.getTargets' }])
        const id = answered(created).targetId as string
        const info = ((answered(list).targetInfos ?? []) as TargetInfo[]).find((t) => t.targetId === id) ?? { targetId: id, type: 'page', title: target, url: target }
        return json(reply, listEntry(ep, info))
      },
    })
  }
  for (const [path, method, done] of [['activate', 'Target.activateTarget', 'Target activated'], ['close', 'Target.closeTarget', 'Target is closing']] as const) {
    app.route({
      method: ['GET', 'PUT'], url: `${BASE}/json/${path}/:targetId`, handler: async (req, reply) => {
        const ep = await endpoint(req)
        const { targetId } = req.params as { targetId: string }
        // the filter acts only on targets it was shown: list first, in the same connection
        const [list, acted] = await run(ep, [{ method: 'Target.getTargets' }, { method, params: { targetId } }])
        if (!((answered(list).targetInfos ?? []) as TargetInfo[]).some((t) => t.targetId === targetId)) throw errors.notFound('target')
        answered(acted)
        return reply.header('content-type', 'text/plain; charset=UTF-8').send(done)
      },
    })
  }
}
