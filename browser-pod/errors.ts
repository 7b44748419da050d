// Node-side errors: the catalogue's (contracts/errors/catalogue-node.ts), and the one
// place a Playwright failure of an ordinary action becomes one of them.
import { ApiError, errors } from '../contracts/errors.ts'

export function isTimeout(e: unknown): boolean {
  return e instanceof Error && e.name === 'TimeoutError'
}

/** First line of a Playwright message, without the "locator.click: " call prefix. */
function headline(e: Error): string {
  return (e.message.split('\n')[0] ?? '').replace(/^[\w.]+: /, '').slice(0, 300)
}

/**
 * Maps a Playwright failure of an ordinary action (never of the secure fill, which
 * reports its own value-free errors) to an ApiError.
 */
export function actionError(e: unknown, what: string): ApiError {
  if (e instanceof ApiError) return e
  if (!(e instanceof Error)) return errors.internal()
  const msg = e.message
  if (isTimeout(e)) {
    const waiting = /waiting for (.*)/.exec(msg)?.[1]
    return errors.actionTimeout(what, waiting ? waiting.slice(0, 300) : '')
  }
  if (/strict mode violation/.test(msg)) return errors.ambiguousSelector(headline(e))
  if (/Unexpected token|is not a valid selector|Unknown engine|Failed to parse selector|Malformed/i.test(msg)) {
    return errors.invalidSelector(headline(e))
  }
  if (/Target page, context or browser has been closed|Browser has been closed/.test(msg)) {
    return errors.browserClosed()
  }
  return errors.actionFailed(what, headline(e))
}
