// A tool call that sends its user to a page (URL elicitation) and returns when the page's
// work is done: credential_request and request_human. /mcp is stateless, so the completion
// can only travel on the call's own response stream: the call stays open until done,
// declined, hung up or past its deadline, with progress every 15 s to keep a client's
// request timer alive. Design: docs/mcp.md#how-url-elicitation-is-routed
import type { UrlElicitation } from './types.ts'

export type ElicitOutcome = 'completed' | 'declined' | 'cancelled' | 'expired'

const PROGRESS_EVERY_MS = 15_000

/**
 * Sends the elicitation, then waits for `done` (given a signal that aborts when the wait
 * ends for another reason). On completion sends notifications/elicitation/complete.
 */
export async function elicitUntil(
  el: UrlElicitation,
  params: { elicitationId: string; url: string; message: string },
  done: (signal: AbortSignal) => Promise<boolean>,
): Promise<ElicitOutcome> {
  const stop = new AbortController()
  const onHangUp = () => stop.abort()
  el.signal.addEventListener('abort', onHangUp)
  // a progress note is a keep-alive: one the client no longer takes (it hung up) is answered by the abort above
  const progress = setInterval(() => { el.progress('waiting for the person').catch(() => {}) }, PROGRESS_EVERY_MS)
  progress.unref()
  try {
    const refused = el.ask(params).then(
      (action): ElicitOutcome | null => (action === 'decline' ? 'declined' : action === 'cancel' ? 'cancelled' : null),
      (): null => null, // no answer (a client that cannot answer, a hang-up): the page still works
    )
    const finished = done(stop.signal).then((ok): ElicitOutcome => (ok ? 'completed' : 'expired'))
    // a refusal ends the wait; an accept (or no answer) leaves it to the page
    const outcome = await Promise.race([finished, refused.then((r) => (r ? r : finished))])
    if (outcome === 'completed') await el.complete(params.elicitationId)
    return outcome
  } finally {
    clearInterval(progress)
    stop.abort()
    el.signal.removeEventListener('abort', onHangUp)
  }
}
