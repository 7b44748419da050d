// URL elicitation on a stateless /mcp (MCP 2025-11-25): a client that declares it gets an
// Mcp-Session-Id remembering only that capability, bound to its org and credential; any
// other client sees the plain stateless server. Memos and answers live in Postgres so any
// replica can route an answer to the waiting call, and one org's memos are bounded apart
// from every other org's. Design: docs/mcp.md#how-url-elicitation-is-routed
import { randomUUID } from 'node:crypto'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { AuthContext } from '../auth/context.ts'
import type { UrlElicitation } from '../operations/types.ts'
import type { Queryable } from '../store/db.ts'

/** The tools whose calls may elicit: they answer on an SSE stream for a client that can be asked. */
export const ELICITING_TOOLS: ReadonlySet<string> = new Set(['credential_request', 'request_human'])

/** a memo unused this long is forgotten */
const MEMO_IDLE_MS = 24 * 3600_000
/** the most memos one credential holds (a client per process or window it runs, not per call) */
export const MEMO_PER_CREDENTIAL = 16
/** the most memos one org holds, all its credentials together */
export const MEMO_PER_ORG = 1000
/** how long an elicitation/create waits for the client's answer before the call goes on without it */
const ANSWER_WAIT_MS = 10 * 60_000
/** how often a replica holding waiting calls reads answers that reached another replica */
const ANSWER_POLL_MS = 1000
const ANSWER_ID_PREFIX = 'nightjar-elicit-'

type Action = 'accept' | 'decline' | 'cancel' | null
const ACTIONS = new Set(['accept', 'decline', 'cancel'])

interface Sender {
  send(message: JSONRPCMessage, options?: { relatedRequestId?: string | number }): Promise<void>
}

export interface MemoDeps {
  db: Queryable
  now: () => number
  /** the caps (tests use small ones); MEMO_PER_CREDENTIAL and MEMO_PER_ORG by default */
  perCredential?: number
  perOrg?: number
}

/** Is this JSON-RPC body (or batch) an initialize that declares URL elicitation? */
export function declaresUrlElicitation(body: unknown): boolean {
  const msg = body as { method?: unknown; params?: { capabilities?: { elicitation?: { url?: unknown } } } } | undefined
  if (!msg || Array.isArray(msg) || msg.method !== 'initialize') return false
  const url = msg.params?.capabilities?.elicitation?.url
  return typeof url === 'object' && url !== null
}

/** Does this body (or batch) carry an initialize request? */
export function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body]
  return messages.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize')
}

export class ElicitationMemo {
  private readonly deps: MemoDeps
  private readonly perCredential: number
  private readonly perOrg: number
  /** the calls of this process waiting for an answer, by elicitation request id */
  private readonly waiting = new Map<string, (a: Action) => void>()
  private poller: NodeJS.Timeout | undefined

  constructor(deps: MemoDeps) {
    this.deps = deps
    this.perCredential = deps.perCredential ?? MEMO_PER_CREDENTIAL
    this.perOrg = deps.perOrg ?? MEMO_PER_ORG
  }

  /** The Mcp-Session-Id to return for an initialize, or null when the client cannot be asked by URL. */
  async remember(auth: AuthContext, body: unknown): Promise<string | null> {
    if (!declaresUrlElicitation(body)) return null
    const id = randomUUID()
    const t = this.deps.now()
    const org = auth.orgId
    const credential = auth.principal.credentialId
    await this.deps.db.query('insert into mcp_elicitation_clients (id, org_id, credential_id, last_used_ms) values ($1, $2, $3, $4)', [id, org, credential, t])
    // past a cap, the least recently used of this credential, then of this org, go; and the org's idle ones
    // (the new memo is never among them: it is counted first)
    await this.deps.db.query(
      `delete from mcp_elicitation_clients where id in (
         select id from mcp_elicitation_clients where org_id = $1 and credential_id = $2 and id <> $4 order by last_used_ms desc, id offset $3)`,
      [org, credential, this.perCredential - 1, id],
    )
    await this.deps.db.query(
      `delete from mcp_elicitation_clients where id in (
         select id from mcp_elicitation_clients where org_id = $1 and id <> $4 order by last_used_ms desc, id offset $2)
         or (org_id = $1 and last_used_ms < $3)`,
      [org, this.perOrg - 1, t - MEMO_IDLE_MS, id],
    )
    return id
  }

  /** Did the client of this request declare URL elicitation (its session id, under this credential)? Marks it used. */
  async canAsk(auth: AuthContext, sessionId: string | undefined): Promise<boolean> {
    if (!sessionId || sessionId.length > 100) return false
    const t = this.deps.now()
    const r = await this.deps.db.query(
      `update mcp_elicitation_clients set last_used_ms = $4
        where id = $1 and org_id = $2 and credential_id = $3 and last_used_ms > $5 returning id`,
      [sessionId, auth.orgId, auth.principal.credentialId, t, t - MEMO_IDLE_MS],
    )
    return (r.rowCount ?? 0) > 0
  }

  /**
   * A POST that only answers our elicitation requests: each answer goes to the call that
   * asked, on whichever replica it waits, and true is returned (the POST is then answered
   * 202). False for anything else — without a query unless every message looks like one.
   */
  async takeAnswers(auth: AuthContext, body: unknown): Promise<boolean> {
    const messages = Array.isArray(body) ? body : [body]
    const answers = messages.filter((m): m is { id: string; result?: { action?: unknown } } =>
      typeof m === 'object' && m !== null && !('method' in m) && typeof (m as { id?: unknown }).id === 'string' && (m as { id: string }).id.startsWith(ANSWER_ID_PREFIX))
    if (!answers.length || answers.length !== messages.length) return false
    const ids = answers.map((m) => m.id)
    const open = await this.deps.db.query(
      'select id from mcp_elicitation_answers where id = any($1) and org_id = $2 and credential_id = $3 and action is null and expires_ms > $4',
      [ids, auth.orgId, auth.principal.credentialId, this.deps.now()],
    )
    if (open.rowCount !== new Set(ids).size) return false
    for (const m of answers) {
      const given = m.result?.action
      const action = typeof given === 'string' && ACTIONS.has(given) ? given : 'none'
      await this.deps.db.query('update mcp_elicitation_answers set action = $2 where id = $1 and action is null', [m.id, action])
      // the call waits here: answered at once; elsewhere, that replica's poll reads it
      this.waiting.get(m.id)?.(action === 'none' ? null : (action as Action))
    }
    return true
  }

  /** Reads the answers that reached other replicas for the calls waiting here. */
  private async poll(): Promise<void> {
    const ids = [...this.waiting.keys()]
    if (!ids.length) return
    const r = await this.deps.db.query('select id, action from mcp_elicitation_answers where id = any($1) and action is not null', [ids])
    for (const row of r.rows as Array<{ id: string; action: string }>) this.waiting.get(row.id)?.(row.action === 'none' ? null : (row.action as Action))
  }

  private wait(id: string, answer: (a: Action) => void): void {
    this.waiting.set(id, answer)
    if (this.poller) return
    // a poll that fails (the database busy) is retried by the next tick; the call's own deadline still holds
    this.poller = setInterval(() => { this.poll().catch(() => {}) }, ANSWER_POLL_MS)
    this.poller.unref() // a wait never keeps the process up
  }

  private unwait(id: string): void {
    this.waiting.delete(id)
    if (!this.waiting.size && this.poller) {
      clearInterval(this.poller)
      this.poller = undefined
    }
  }

  /** What a tool call may do with its client, written straight to the call's transport. */
  forCall(auth: AuthContext, transport: Sender, requestId: string | number, progressToken: string | number | undefined, signal: AbortSignal): UrlElicitation {
    let progress = 0
    const { db, now } = this.deps
    return {
      signal,
      ask: (params) => new Promise<Action>((resolve, reject) => {
        const id = `${ANSWER_ID_PREFIX}${randomUUID()}`
        let done = false
        const finish = (a: Action) => {
          if (done) return
          done = true
          clearTimeout(timer)
          signal.removeEventListener('abort', hungUp)
          this.unwait(id)
          // the row has served its call (gone before the call goes on); one a failed delete left behind expires with its org's next ask
          db.query('delete from mcp_elicitation_answers where id = $1', [id]).catch(() => {}).finally(() => resolve(a))
        }
        const hungUp = () => finish(null)
        const timer = setTimeout(() => finish(null), ANSWER_WAIT_MS)
        timer.unref() // a wait never keeps the process up
        if (signal.aborted) return finish(null)
        signal.addEventListener('abort', hungUp)
        const t = now()
        // the row exists before the client can answer it; the org's expired rows go with it
        db.query('delete from mcp_elicitation_answers where org_id = $1 and expires_ms <= $2', [auth.orgId, t])
          .then(() => db.query('insert into mcp_elicitation_answers (id, org_id, credential_id, expires_ms) values ($1, $2, $3, $4)',
            [id, auth.orgId, auth.principal.credentialId, t + ANSWER_WAIT_MS]))
          .then(() => {
            if (done) return
            this.wait(id, finish)
            return transport.send({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { mode: 'url', ...params } }, { relatedRequestId: requestId })
          })
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
