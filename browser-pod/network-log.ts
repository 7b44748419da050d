// The session's network request log: method, URL without its query, status, type and
// timing of every request, in a ring of the newest NETWORK_LOG_LIMIT. Only what an entry
// holds is ever read of a request, a response or a failure — never a body or a header (so
// never Authorization or a cookie) — so nothing else can be kept or returned.
import type { Page, Request } from 'playwright-core'
import { NETWORK_LOG_LIMIT } from '../contracts/operations/drive-inspect.ts'
import type { PodInput, PodOutput } from '../contracts/pod-api.ts'

/** What the log needs of the pod's session (PodSession; not imported, so session.ts and this file stay acyclic). */
export interface PageSource {
  /** runs the hook on every page of the session, open now or opened later (tabs, popups) */
  onPage(hook: (page: Page) => void): void
}

type Entry = PodOutput<'network_requests'>['requests'][number]

/** A request URL as the log keeps it: scheme, host and path — no userinfo, query or fragment; data: and other schemes by their scheme alone. */
export function loggedUrl(raw: string): string {
  try {
    const u = new URL(raw)
    if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'ws:' || u.protocol === 'wss:') return `${u.protocol}//${u.host}${u.pathname}`
    return u.protocol
  } catch {
    return '(invalid)'
  }
}

/** net::ERR_… only: a failure's text is Chromium's error code, but keep nothing else should it ever carry more. */
function failureCode(text: string | undefined): string {
  return /^net::ERR_[A-Z0-9_]+$/.exec(text ?? '')?.[0] ?? 'failed'
}

export class NetworkLog {
  readonly #entries: Entry[] = []
  readonly #open = new WeakMap<Request, Entry>()
  #total = 0
  readonly #now: () => number

  constructor(session: PageSource, now: () => number = Date.now) {
    this.#now = now
    session.onPage((page) => this.#watch(page))
  }

  #watch(page: Page): void {
    page.on('request', (req) => this.#started(req))
    page.on('response', (res) => {
      const e = this.#open.get(res.request())
      if (e) e.status = res.status()
    })
    page.on('requestfinished', (req) => this.#ended(req, null))
    page.on('requestfailed', (req) => this.#ended(req, failureCode(req.failure()?.errorText)))
  }

  #started(req: Request): void {
    const entry: Entry = { method: req.method(), url: loggedUrl(req.url()), status: null, resourceType: req.resourceType(), startedAt: this.#now(), durationMs: null, failure: null }
    this.#open.set(req, entry)
    this.#entries.push(entry)
    this.#total++
    if (this.#entries.length > NETWORK_LOG_LIMIT) this.#entries.splice(0, this.#entries.length - NETWORK_LOG_LIMIT)
  }

  #ended(req: Request, failure: string | null): void {
    const e = this.#open.get(req)
    if (!e) return
    this.#open.delete(req)
    e.durationMs = Math.max(0, this.#now() - e.startedAt)
    if (failure !== null) e.failure = failure
  }

  /** The newest `limit` entries that pass the filter, oldest first (copies: the log keeps changing). */
  list(filter: PodInput<'network_requests'> = {}): PodOutput<'network_requests'> {
    const method = filter.method?.toUpperCase()
    const type = filter.resourceType?.toLowerCase()
    const matching = this.#entries.filter((e) =>
      (method === undefined || e.method === method) &&
      (type === undefined || e.resourceType === type) &&
      (filter.urlContains === undefined || e.url.includes(filter.urlContains)))
    const limit = Number(filter.limit ?? NETWORK_LOG_LIMIT)
    return {
      requests: matching.slice(-limit).map((e) => ({ ...e })),
      total: this.#total,
      dropped: this.#total - this.#entries.length,
    }
  }
}
