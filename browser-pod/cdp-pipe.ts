// CDP connect without a DevTools port: Chromium speaks CDP only over the pipe Playwright
// launched it with, and each CDP client gets a browser session of its own on that pipe
// (Target.attachToBrowserTarget), as a second DevTools connection would. No TCP port means
// no local process of another user can reach the browser. Design: docs/security.md
import type { Browser } from 'playwright-core'

/** One CDP client's view of the pipe: its messages in, Chromium's answers and events for it out. */
export interface CdpChannel {
  /** a client message (already judged by the filter), as CDP JSON text */
  send(text: string): void
  /** Chromium's messages for this client, serialised as Chromium writes them */
  onMessage?: (text: string) => void
  /** the browser went away, or the channel was closed */
  onClose?: (why: string) => void
  close(): void
}

export interface CdpTap {
  /** A new client's channel: resolves once Chromium gave it its browser session. */
  open(): Promise<CdpChannel>
}

type Message = { id?: number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown; sessionId?: string }
interface PipeTransport {
  send(message: Message): void
  onmessage?: (message: Message) => void
  onclose?: (reason?: string) => void
}

/**
 * Our messages' ids count down from here: Playwright's count up from 1 and Chromium takes
 * any 32-bit integer (Playwright's own close message is -9999).
 */
const FIRST_ID = -100_000

interface Client {
  /** the browser session Chromium gave this client: its "no sessionId" */
  root: string
  /** every session this client attached (flattened), its root included */
  sessions: Set<string>
  channel: Channel
}

/**
 * The tap itself: it stands between Playwright's connection and the pipe, takes what
 * belongs to a client's sessions or to our own ids, and hands everything else on.
 */
class Tap implements CdpTap {
  readonly #transport: PipeTransport
  readonly #playwright: (m: Message) => void
  readonly #bySession = new Map<string, Client>()
  /** our id → who asked, and the id they asked with (undefined: the tap's own message) */
  readonly #pending = new Map<number, { client: Client | undefined; id: number; attach?: boolean; resolve?: (m: Message) => void }>()
  readonly #clients = new Set<Client>()
  #nextId = FIRST_ID
  #closed = false

  constructor(transport: PipeTransport) {
    this.#transport = transport
    const playwright = transport.onmessage!
    const playwrightClose = transport.onclose
    this.#playwright = playwright
    transport.onmessage = (m) => this.#receive(m)
    transport.onclose = (reason) => {
      this.#closed = true
      for (const c of [...this.#clients]) c.channel.ended('the browser closed the connection')
      playwrightClose?.(reason)
    }
  }

  async open(): Promise<CdpChannel> {
    if (this.#closed) throw new Error('the browser is gone')
    const answer = await new Promise<Message>((resolve) => this.#send({ method: 'Target.attachToBrowserTarget', params: {} }, { client: undefined, id: 0, resolve }))
    const root = answer.result?.sessionId
    if (typeof root !== 'string') throw new Error('Chromium gave no browser session')
    const client: Client = { root, sessions: new Set([root]), channel: undefined as unknown as Channel }
    client.channel = new Channel(this, client)
    this.#clients.add(client)
    this.#bySession.set(root, client)
    return client.channel
  }

  /** A client's message: its own ids swapped for ours, "no session" made its browser session. */
  forward(client: Client, text: string): void {
    const m = JSON.parse(text) as Message
    const sessionId = m.sessionId ?? client.root
    if (!client.sessions.has(sessionId)) {
      const error = { code: -32001, message: 'Session with given id not found.' }
      client.channel.deliver(JSON.stringify(m.sessionId === undefined ? { id: m.id, error } : { id: m.id, error, sessionId: m.sessionId }))
      return
    }
    const attach = m.method === 'Target.attachToTarget' || m.method === 'Target.attachToBrowserTarget'
    this.#send({ method: m.method, params: m.params, sessionId }, { client, id: m.id ?? 0, attach })
  }

  /** The client went away: its browser session ends, and Chromium detaches the sessions under it. */
  drop(client: Client): void {
    if (!this.#clients.delete(client)) return
    for (const s of client.sessions) this.#bySession.delete(s)
    for (const p of this.#pending.values()) if (p.client === client) p.client = undefined
    if (!this.#closed) this.#send({ method: 'Target.detachFromTarget', params: { sessionId: client.root } }, { client: undefined, id: 0 })
  }

  #send(m: Message, who: { client: Client | undefined; id: number; attach?: boolean; resolve?: (m: Message) => void }): void {
    if (this.#closed) return
    const id = this.#nextId--
    this.#pending.set(id, who)
    try {
      this.#transport.send({ id, ...m })
    } catch {
      this.#pending.delete(id) // the pipe closed under us: onclose tells the clients
    }
  }

  #receive(m: Message): void {
    if (typeof m.id === 'number' && m.id <= FIRST_ID) {
      const who = this.#pending.get(m.id)
      if (!who) return
      this.#pending.delete(m.id)
      if (who.resolve) return who.resolve(m)
      const client = who.client
      if (!client) return
      const sid = m.result?.sessionId
      if (who.attach && typeof sid === 'string') this.#own(client, sid)
      m.id = who.id
      return this.#toClient(client, m)
    }
    const client = m.sessionId === undefined ? undefined : this.#bySession.get(m.sessionId)
    if (!client) return this.#playwright(m)
    // sessions attached under a client's own (auto-attach) are that client's too
    if (m.method === 'Target.attachedToTarget' && typeof m.params?.sessionId === 'string') this.#own(client, m.params.sessionId)
    else if (m.method === 'Target.detachedFromTarget' && typeof m.params?.sessionId === 'string') {
      client.sessions.delete(m.params.sessionId)
      this.#bySession.delete(m.params.sessionId)
    }
    this.#toClient(client, m)
  }

  #own(client: Client, sessionId: string): void {
    client.sessions.add(sessionId)
    this.#bySession.set(sessionId, client)
  }

  #toClient(client: Client, m: Message): void {
    if (m.sessionId === client.root) delete m.sessionId
    client.channel.deliver(JSON.stringify(m))
  }
}

class Channel implements CdpChannel {
  onMessage?: (text: string) => void
  onClose?: (why: string) => void
  readonly #tap: Tap
  readonly #client: Client
  #open = true

  constructor(tap: Tap, client: Client) {
    this.#tap = tap
    this.#client = client
  }

  send(text: string): void {
    if (this.#open) this.#tap.forward(this.#client, text)
  }

  deliver(text: string): void {
    if (this.#open) this.onMessage?.(text)
  }

  ended(why: string): void {
    if (!this.#open) return
    this.#open = false
    this.onClose?.(why)
  }

  close(): void {
    if (!this.#open) return
    this.#open = false
    this.#tap.drop(this.#client)
  }
}

const taps = new WeakMap<Browser, CdpTap | undefined>()

/**
 * The tap on this browser's pipe, or undefined where it cannot be had: Playwright keeps
 * the pipe on its in-process server objects, which the public API does not expose. A
 * Playwright without them leaves CDP connect unavailable (the pod answers 503), never the pod.
 */
export function cdpTap(browser: Browser): CdpTap | undefined {
  if (taps.has(browser)) return taps.get(browser)
  let tap: CdpTap | undefined
  try {
    const connection = (browser as unknown as { _connection?: { toImpl?: (o: unknown) => { _connection?: { _transport?: unknown } } | undefined } })._connection
    const transport = connection?.toImpl?.(browser)?._connection?._transport as PipeTransport | undefined
    if (transport && typeof transport.send === 'function' && typeof transport.onmessage === 'function') tap = new Tap(transport)
  } catch {
    tap = undefined
  }
  taps.set(browser, tap)
  return tap
}
