// Real Chromium for tests (Debian's package), launched with the flags this machine needs.
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM_TEST_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

export async function launchTestBrowser(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: process.env.NIGHTJAR_CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_TEST_ARGS,
  })
  t.teardown(() => browser.close())
  return browser
}
