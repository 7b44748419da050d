// One DevTools (CDP) session of our own per tab, for what Playwright's client API does not
// offer: stopping a runaway evaluate (actions/inspect.ts) and reading which refs the
// viewport shows (viewport.ts). Opened on first use; it ends with the page.
import type { CDPSession, Page } from 'playwright-core'

const sessions = new WeakMap<Page, Promise<CDPSession | undefined>>()

/**
 * The tab's session, or undefined where none can be opened (a browser without DevTools
 * sessions for pages, a tab already closing): each caller has a way on without it, so the
 * reason is not worth more than that undefined.
 */
export function devtools(page: Page): Promise<CDPSession | undefined> {
  let s = sessions.get(page)
  if (!s) {
    s = page.context().newCDPSession(page).catch(() => undefined)
    sessions.set(page, s)
  }
  return s
}
