// A hollow browser pod: the pod API of contracts/pod-api.ts, at the pod's own address and
// port, checked as the real pod checks it (the token, the method, the input's schema), and
// answered without a browser from one fixed small page. Many live in the fleet's process,
// one listener each, so the api-server and the operator reach them exactly as they reach a
// real pod. What it does not simulate: docs/scale.md ("The hollow pod").
import http from 'node:http'
import { createHash, timingSafeEqual } from 'node:crypto'
import { ApiError, errors, upgradeErrors, upgradeRefusal } from '../../contracts/errors.ts'
import { podRoutes, type PodRouteName } from '../../contracts/pod-api.ts'

/** the fixed page every hollow pod shows, whatever the address it was sent to */
export const HOLLOW_TITLE = 'Hollow page'
const SNAPSHOT = [
  `- heading "${HOLLOW_TITLE}" [level=1] [ref=e1]`,
  '- paragraph: "A fixed page served by the simulated fleet; no browser runs here."',
  '- link "Next" [ref=e2] [url=/next]',
  '- textbox "Search" [ref=e3]',
  '- button "Go" [ref=e4]',
].join('\n')

/** what a hollow pod answers, per route it simulates; every other route fails as an action would */
const answers: Partial<Record<PodRouteName, (pod: HollowPod, input: any) => unknown>> = {
  health: (p) => ({ ok: true, configured: p.sessionId !== undefined, sandbox: 'chromium' }),
  configure: (p, i) => {
    p.sessionId = i.sessionId
    return { ok: true, sessionId: i.sessionId, sandbox: 'chromium' }
  },
  egress_proxy: () => ({ ok: true }),
  recording_start: () => ({ ok: true }),
  recording_read: () => ({ chunks: [], more: false, dropped: 0, recording: false }),
  navigate: (p, i) => {
    p.url = i.url
    return { url: i.url, title: HOLLOW_TITLE, status: 200, ...(i.changes === false ? {} : { changes: SNAPSHOT }) }
  },
  perceive: (p) => ({ url: p.url, title: HOLLOW_TITLE, snapshot: SNAPSHOT, text: '' }),
  act: (p, i) => ({ ok: true, verb: i.verb, url: p.url, ...(i.changes === false ? {} : { changes: i.verb === 'type' ? `~ textbox "Search" [ref=e3]: "${String(i.text ?? '').slice(0, 40)}"` : '' }) }),
}

/** the contract's routes by path, each with its name */
const ROUTES = new Map((Object.entries(podRoutes) as [PodRouteName, (typeof podRoutes)[PodRouteName]][]).map((e) => [e[1].path, e] as const))

interface HollowPod {
  sessionId?: string
  url: string
}

/** One hollow pod: listening at its address until closed; frozen, it takes requests and answers none. */
export class HollowServer {
  readonly #server: http.Server
  readonly #digest: Buffer
  readonly #pod: HollowPod = { url: 'about:blank' }
  #frozen = false
  /** requests held while frozen: answered once thawed, as a frozen process goes on where it was */
  readonly #held: (() => void)[] = []

  constructor(token: string) {
    this.#digest = sha256(token)
    this.#server = http.createServer((req, res) => {
      if (this.#frozen) this.#held.push(() => void this.#serve(req, res))
      else void this.#serve(req, res)
    })
    this.#server.on('upgrade', (_req, socket) => {
      socket.on('error', () => socket.destroy())
      // CDP and the live view need a browser: the hollow pod has none
      socket.end(upgradeRefusal(upgradeErrors.cdpUnavailable()))
    })
    this.#server.keepAliveTimeout = 65_000
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject)
        resolve()
      })
    })
  }

  freeze(frozen: boolean): void {
    this.#frozen = frozen
    if (!frozen) for (const go of this.#held.splice(0)) go()
  }

  close(): Promise<void> {
    this.#held.length = 0
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    this.#server.closeAllConnections()
    return closed
  }

  async #serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const path = (req.url ?? '').split('?')[0]
      const entry = ROUTES.get(path)
      if (entry?.[1].auth !== false && !this.#authorized(req.headers.authorization)) throw errors.unauthorized()
      if (!entry) throw errors.noSuchRoute()
      const [name, route] = entry
      if (req.method !== route.method) throw errors.methodNotAllowed(route.method).withHeaders({ allow: route.method })
      const raw = route.method === 'POST' ? await readBody(req) : ''
      let body: unknown
      try { body = raw ? JSON.parse(raw) : {} } catch { throw errors.invalidRequest('body: not JSON') }
      const parsed = route.input.safeParse(body)
      if (!parsed.success) throw errors.invalidRequest(`${parsed.error.issues[0]?.path.join('.') || 'body'}: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
      const answer = answers[name]
      if (!answer) throw errors.actionFailed(name, 'not simulated by the hollow pod (it has no browser)')
      send(res, 200, answer(this.#pod, parsed.data))
    } catch (e) {
      const err = e instanceof ApiError ? e : errors.internal()
      send(res, err.status, err.toBody(), err.headers)
    }
  }

  #authorized(header: string | undefined): boolean {
    return !!header?.startsWith('Bearer ') && timingSafeEqual(sha256(header.slice(7)), this.#digest)
  }
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text)
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
