// URL elicitation on a stateless /mcp (MCP 2025-11-25, issue #29 items 2 and 3).
//
// /mcp keeps no MCP sessions: every POST gets a fresh server, which never saw the client's
// `initialize` and so cannot know its capabilities. A client that declares
// `elicitation: { url: {} }` is therefore given an `Mcp-Session-Id` with its initialize
// answer — a memo of that one capability, bound to the Bearer credential that declared it,
// kept in this process (a day since last use; the oldest go first past 10 000). Any other
// client gets no session id and sees exactly the stateless server it always saw. An
// unknown or foreign id is not an error: the call is simply made without elicitation and
// the tool answers with the URL, as for any client (a restart, another replica).
//
// While credential_request or request_human waits, its call answers on an SSE stream
// (instead of one JSON body), which carries `elicitation/create` and then
// `notifications/elicitation/complete`. The client answers `elicitation/create` in a new
// POST: that JSON-RPC response is matched here, by an id no other server uses, to the call
// that asked, and the POST is answered 202.
import { randomUUID } from 'node:crypto'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { AuthContext } from '../auth/context.ts'
import type { UrlElicitation } from '../operations/types.ts'

/** The tools whose calls may elicit: they answer on an SSE stream for a client that can be asked. */
export const ELICITING_TOOLS: ReadonlySet<string> = new Set(['credential_request', 'request_human'])

const MEMO_IDLE_MS = 24 * 3600_000
const MEMO_MAX = 10_000
/** how long an elicitation/create waits for the client's answer before the call goes on without it */
const ANSWER_WAIT_MS = 10 * 60_000

type Action = 'accept' | 'decline' | 'cancel' | null

interface Sender {
  send(message: JSONRPCMessage, options?: { relatedRequestId?: string | number }): Promise<void>
}

const who = (auth: AuthContext) => `${auth.orgId}/${auth.principal.credentialId}`

export class ElicitationMemo {
  private readonly clients = new Map<string, { who: string; lastUsed: number }>()
  private readonly pending = new Map<string, { who: string; answer: (a: Action) => void }>()

  /** The Mcp-Session-Id to return for an initialize, or null when the client cannot be asked by URL. */
  remember(auth: AuthContext, body: unknown): string | null {
    const msg = body as { method?: unknown; params?: { capabilities?: { elicitation?: { url?: unknown } } } } | undefined
    if (!msg || Array.isArray(msg) || msg.method !== 'initialize') return null
    const url = msg.params?.capabilities?.elicitation?.url
    if (typeof url !== 'object' || url === null) return null
    if (this.clients.size >= MEMO_MAX) this.clients.delete(this.clients.keys().next().value!)
    const id = randomUUID()
    this.clients.set(id, { who: who(auth), lastUsed: Date.now() })
    return id
  }

  /** Did the client of this request declare URL elicitation (its session id, under this credential)? */
  canAsk(auth: AuthContext, sessionId: string | undefined): boolean {
    const memo = sessionId ? this.clients.get(sessionId) : undefined
    if (!memo || memo.who !== who(auth)) return false
    if (Date.now() - memo.lastUsed > MEMO_IDLE_MS) {
      this.clients.delete(sessionId!)
      return false
    }
    // most recently used last, so the oldest are dropped first
    this.clients.delete(sessionId!)
    this.clients.set(sessionId!, { ...memo, lastUsed: Date.now() })
    return true
  }

  /**
   * A POST that only answers our elicitation requests: each answer goes to the call that
   * asked, and true is returned (the POST is then answered 202). False for anything else.
   */
  takeAnswers(auth: AuthContext, body: unknown): boolean {
    const messages = Array.isArray(body) ? body : [body]
    const answers = messages.filter((m): m is { id: string; result?: { action?: unknown } } =>
      typeof m === 'object' && m !== null && !('method' in m) && typeof (m as { id?: unknown }).id === 'string' && this.pending.get((m as { id: string }).id)?.who === who(auth))
    if (!answers.length || answers.length !== messages.length) return false
    for (const m of answers) {
      const action = m.result?.action
      this.pending.get(m.id)?.answer(action === 'accept' || action === 'decline' || action === 'cancel' ? action : null)
    }
    return true
  }

  /** What a tool call may do with its client, written straight to the call's transport. */
  forCall(auth: AuthContext, transport: Sender, requestId: string | number, progressToken: string | number | undefined, signal: AbortSignal): UrlElicitation {
    let progress = 0
    return {
      signal,
      ask: (params) => new Promise<Action>((resolve, reject) => {
        const id = `nightjar-elicit-${randomUUID()}`
        const finish = (a: Action) => {
          clearTimeout(timer)
          signal.removeEventListener('abort', hungUp)
          this.pending.delete(id)
          resolve(a)
        }
        const hungUp = () => finish(null)
        const timer = setTimeout(() => finish(null), ANSWER_WAIT_MS)
        timer.unref() // a wait never keeps the process up
        if (signal.aborted) return finish(null)
        signal.addEventListener('abort', hungUp)
        this.pending.set(id, { who: who(auth), answer: finish })
        transport.send({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { mode: 'url', ...params } }, { relatedRequestId: requestId })
          .catch((e: unknown) => { finish(null); reject(e) })
      }),
      complete: (elicitationId) =>
        transport.send({ jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId } }, { relatedRequestId: requestId }),
      progress: async (message) => {
        if (progressToken === undefined || signal.aborted) return
        await transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: ++progress, message } }, { relatedRequestId: requestId })
      },
    }
  }
}
