// A replica's session starts as it shuts down. A start lives in this process's memory (once
// the process is gone another replica fails it as Orphaned), so closing waits for the starts
// in flight; and a caller still waiting on one (Prefer: wait, waitSeconds) is answered at
// once with the session as it stands (202 pending, the start going on) instead of being cut
// at the drain deadline. Why: docs/upgrades.md#no-error-during-a-rollout
import { setMaxListeners } from 'node:events'

export class StartDrain {
  readonly #closing = new AbortController()
  constructor() {
    // one listener per waiting caller: hundreds at once are expected, not a leak
    setMaxListeners(0, this.#closing.signal)
  }

  readonly #inFlight = new Set<Promise<void>>()
  #deadline = Infinity

  /** aborted once the server stops accepting: every wait on a start ends now */
  get closing(): AbortSignal {
    return this.#closing.signal
  }

  /** a start of this process, until it settles (live or failed) */
  track(start: Promise<unknown>): void {
    const settled = start.then(() => {}, () => {})
    this.#inFlight.add(settled)
    void settled.then(() => this.#inFlight.delete(settled))
  }

  get inFlight(): number {
    return this.#inFlight.size
  }

  /** waits end now; the starts themselves get until `deadline` (epoch ms) to settle */
  close(deadline: number): void {
    this.#deadline = deadline
    this.#closing.abort()
  }

  /** resolves once every start in flight settled, or at the deadline: how many were left */
  async settled(): Promise<number> {
    // not closing (an app that never became ready skips preClose): nothing to wait for
    const wait = this.#closing.signal.aborted ? this.#deadline - Date.now() : 0
    if (!this.#inFlight.size || wait <= 0) return this.#inFlight.size
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all([...this.#inFlight]),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, Math.min(wait, 2 ** 31 - 1)) }),
    ])
    clearTimeout(timer)
    return this.#inFlight.size
  }
}

/** `p`, or 'closing' as soon as `signal` aborts (at once if it has); the listener goes with the wait */
export function orClosing<T>(signal: AbortSignal, p: Promise<T>): Promise<T | 'closing'> {
  if (signal.aborted) return Promise.resolve('closing')
  let onAbort = () => {}
  const closing = new Promise<'closing'>((resolve) => { onAbort = () => resolve('closing') })
  signal.addEventListener('abort', onAbort, { once: true })
  return Promise.race([p, closing]).finally(() => signal.removeEventListener('abort', onAbort))
}
