// Pod-side errors: the catalogue's (contracts/errors/catalogue-pod.ts), and the one
// place a Playwright failure of an ordinary action becomes one of them.
import { ApiError, errors } from '../contracts/errors.ts'

export function isTimeout(e: unknown): boolean {
  return e instanceof Error && e.name === 'TimeoutError'
}

/** First line of a Playwright message, without the "locator.click: " call prefix. */
function headline(e: Error): string {
  return (e.message.split('\n')[0] ?? '').replace(/^[\w.]+: /, '').slice(0, 300)
}

// What Playwright says when it cannot parse a selector, wherever it finds out: its own
// parser on the client (CSS tokens "Unsupported token" / "Unexpected token … while
// parsing css selector", "Malformed selector", capture and chaining rules), the injected
// script (an engine's body: role=…[, internal:…, "Unexpected end of selector"), an unknown
// engine, and the browser's own parsers (querySelectorAll, XPath, a text=/regex/).
const SELECTOR_SYNTAX = new RegExp([
  'while parsing (css )?selector', 'InvalidSelectorError', 'Unsupported token', 'Unexpected token', 'Unexpected end of selector',
  'Error while parsing selector', 'Malformed selector', 'Unknown engine', 'Failed to parse selector', 'cannot be first',
  'Can not capture the selector', 'Only one of the selectors can capture', 'is not a valid (selector|XPath expression)',
  'Invalid regular expression', 'Invalid flags supplied to RegExp', 'Selector cannot (start|end) with entering frame',
  'unknown internal:control selector', 'selector is not supported', "Can't query n-th element",
].join('|'), 'i')

/** Is this Playwright message a selector that cannot be parsed (never the page's own failure)? */
export function isSelectorSyntaxError(message: string): boolean {
  return SELECTOR_SYNTAX.test(message.split('\n')[0] ?? '')
}

/** The parser's words for a selector it refused, without Playwright's call prefix and error class. */
export function selectorProblem(e: Error): string {
  return headline(e).replace(/^(InvalidSelectorError|SyntaxError|Error): /, '')
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
  if (isSelectorSyntaxError(msg)) return errors.invalidSelector(selectorProblem(e))
  if (/Target page, context or browser has been closed|Browser has been closed/.test(msg)) {
    return errors.browserClosed()
  }
  // a TypeError here is Playwright's injected script failing, never words for a caller
  return errors.actionFailed(what, /\bTypeError\b/.test(headline(e)) ? 'the browser could not carry it out' : headline(e))
}
