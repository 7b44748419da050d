// The pod's actions for contracts/operations/drive-inspect.ts: the network request log
// (kept by network-log.ts) and evaluate. Every reply, evaluate's result included, passes
// the pod's echo guard (pod-api.ts): nothing here is opaque.
import vm from 'node:vm'
import type { CDPSession, Page } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { EVALUATE_MAX_RESULT, EvaluateResult, type inspectContracts } from '../../contracts/operations/drive-inspect.ts'
import { actionError } from '../errors.ts'
import { devtools } from '../devtools.ts'
import { ACTION_TIMEOUT_MS, type PodSession } from '../session.ts'
import type { ActionTable } from './types.ts'

export function networkRequests(session: PodSession, input: PodInput<'network_requests'>): PodOutput<'network_requests'> {
  void session.page // 409 before configure, like every other route
  return session.network.list(input)
}

/**
 * The code as the body of an async arrow function: an expression is returned, a
 * function body runs as written (its `return` is the result). Decided by compiling —
 * never running — both forms here; code that is neither is refused before the page.
 */
export function asFunctionBody(code: string): string {
  const expression = `return (${code}\n)`
  const body = `${code}\n`
  for (const candidate of [expression, body]) {
    try {
      new vm.Script(`(async () => {${candidate}})`)
      return candidate
    } catch {
      // not this form; try the next
    }
  }
  throw errors.evaluateSyntax()
}

/**
 * What runs in the page: the caller's code, then its value checked and turned into JSON
 * there (so a DOM node, a function or a cycle is a typed error, not a silent `{}`, and
 * an oversized result never crosses the wire). The code is an argument of the checking
 * function, so it sees the page's globals and none of the checker's names. It answers
 * one of {json, type} | {thrown: {name, message}} | {unserializable} | {tooLarge}.
 */
function pageScript(body: string): string {
  return `((run) => (async () => {
  let value
  try {
    value = await run()
  } catch (e) {
    let name = 'a non-Error value', message = ''
    try {
      if (e !== null && typeof e === 'object' && 'message' in e) { name = String(e.name || 'Error'); message = String(e.message) }
      else message = String(e)
    } catch { /* an error whose fields throw: its name alone */ }
    return { thrown: { name, message } }
  }
  const type = value === undefined ? 'undefined' : value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
  let bad = null, root = true
  const replacer = function (key, x) {
    const top = root
    root = false
    if (bad) return undefined
    const t = typeof x
    if (t === 'bigint') bad = 'a bigint'
    else if (top && (t === 'function' || t === 'symbol')) bad = 'a ' + t
    else if (top && t === 'number' && !Number.isFinite(x)) bad = 'a non-finite number'
    else if (x !== null && t === 'object') {
      if (typeof Node === 'function' && x instanceof Node) bad = 'a DOM node'
      else if (typeof Window === 'function' && x instanceof Window) bad = 'a window'
    }
    return bad ? undefined : x
  }
  let json
  try {
    json = JSON.stringify(value, replacer)
  } catch (e) {
    return { unserializable: bad || (/circular/i.test(String(e && e.message)) ? 'a circular structure' : 'its JSON conversion threw') }
  }
  if (bad) return { unserializable: bad }
  if (json === undefined) json = 'null'
  if (json.length > ${EVALUATE_MAX_RESULT}) return { tooLarge: true }
  return { json, type }
})())(async () => {${body}})`
}

type PageReply = { json: string; type: string } | { thrown: { name: string; message: string } } | { unserializable: string } | { tooLarge: true }

const TYPES = EvaluateResult.shape.type.options as readonly string[]
const clip = (s: unknown, n: number) => String(s ?? '').split('\n')[0].slice(0, n)

export async function evaluate(session: PodSession, input: PodInput<'evaluate'>): Promise<PodOutput<'evaluate'>> {
  const page = session.page
  const script = pageScript(asFunctionBody(input.expression))
  const timeoutMs = input.timeoutMs ?? ACTION_TIMEOUT_MS
  // opened before the code runs: a page whose main thread the code holds could not be attached to after
  // (without one the code still runs; only the stop after a timeout is lost)
  const cdp = await devtools(page)
  const running = page.evaluate(script) as Promise<PageReply>
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))
  let reply: PageReply | 'timeout'
  try {
    reply = await Promise.race([running, timedOut])
  } catch (e) {
    throw actionError(e, 'evaluate')
  } finally {
    clearTimeout(timer)
  }
  if (reply === 'timeout') {
    running.catch(() => {}) // its outcome no longer has a caller: the timeout was the answer
    if (cdp) await stopIfBusy(cdp)
    throw errors.actionTimeout('evaluate', '')
  }
  if (!reply || typeof reply !== 'object') throw errors.evaluateNotSerializable('an unexpected reply')
  if ('thrown' in reply) throw errors.evaluateThrew(clip(reply.thrown.name, 60), clip(reply.thrown.message, 300))
  if ('unserializable' in reply) throw errors.evaluateNotSerializable(clip(reply.unserializable, 60))
  if ('tooLarge' in reply) throw errors.evaluateResultTooLarge(EVALUATE_MAX_RESULT)
  if (typeof reply.json !== 'string' || reply.json.length > EVALUATE_MAX_RESULT) throw errors.evaluateNotSerializable('an unexpected reply')
  let value: unknown
  try {
    value = JSON.parse(reply.json)
  } catch {
    throw errors.evaluateNotSerializable('an unexpected reply')
  }
  return { value, type: (TYPES.includes(reply.type) ? reply.type : 'object') as PodOutput<'evaluate'>['type'] }
}


/**
 * After a timeout the code may still hold the page's main thread (a loop that never
 * ends): if the page does not answer a trivial evaluation promptly, the running script
 * is terminated, so the session's next action is not stuck behind it. A page that does
 * answer is left alone (terminating when nothing runs would kill the page's next script).
 */
async function stopIfBusy(cdp: CDPSession): Promise<void> {
  const probe = cdp.send('Runtime.evaluate', { expression: '0' }).then(() => 'idle' as const, () => 'gone' as const)
  let timer: NodeJS.Timeout | undefined
  const state = await Promise.race([probe, new Promise<'busy'>((r) => (timer = setTimeout(() => r('busy'), 500)))])
  clearTimeout(timer)
  // Runtime.terminateExecution interrupts the page's main thread; a page gone meanwhile has nothing left running
  if (state === 'busy') await cdp.send('Runtime.terminateExecution').catch(() => {})
}

/** This file's rows of the pod's action table (actions/index.ts). */
export const inspectActions: Pick<ActionTable, (typeof inspectContracts)[number]['name']> = {
  network_requests: networkRequests,
  evaluate,
}
