// A person signing in to the console in a real browser, for the console tests.
import type { BrowserContext, Page } from 'playwright-core'
import type { TestServer } from './server.ts'

/** Opens `path`, signs in on the login page it redirects to, and waits to be back at `path`. */
export async function signIn(s: TestServer, ctx: BrowserContext, email: string, password: string, path: string): Promise<Page> {
  const page = await ctx.newPage()
  await page.goto(`${s.url}${path}`)
  await page.fill('#email', email)
  await page.fill('#password', password)
  await page.click('button[type=submit]')
  await page.waitForURL((u) => u.pathname === path)
  return page
}
