// Polls a condition until it holds or the deadline passes. This is not a sleep used
// as synchronisation: the test proceeds the moment the condition is observed.
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20, what = 'condition' }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await check()
      if (v) return v as NonNullable<T>
    } catch (e) {
      last = e
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}

/**
 * Awaits `work`, failing with a message that names it when it has not settled in `timeoutMs`:
 * a step that hangs then says which one it was, instead of the file's bare timeout.
 */
export async function within<T>(work: Promise<T>, what: string, timeoutMs = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs) })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}
