// Fidelity of the cloak profile: the bot-detection signals of test/fixtures/pages/
// fidelity.html, judged in stock headless Chromium (the baseline: playwright-core's
// defaults), in a Nightjar chromium pod and in a Nightjar cloak pod, in one run. The page
// is served by request interception on an https origin, so the secure-context signals
// (UA-CH, storage quota, notifications) are judged too and no network is involved.
import type { BrowserKind } from '../crds/types.ts'
import { readFileSync } from 'node:fs'
import { chromium, type Page } from 'playwright-core'
import { startPod } from '../browser-pod/pod.ts'

const PAGE = readFileSync(new URL('../test/fixtures/pages/fidelity.html', import.meta.url), 'utf8')
const ORIGIN = 'https://fidelity.nightjar.test'

interface Fidelity {
  passed: number
  total: number
  signals: Record<string, { pass: boolean | 'n/a'; value: unknown }>
}

async function measure(page: Page): Promise<Fidelity> {
  await page.route(`${ORIGIN}/**`, (r) => r.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: PAGE }))
  await page.goto(`${ORIGIN}/`)
  await page.waitForFunction(() => document.title === 'fidelity: done', undefined, { timeout: 30_000 })
  return page.evaluate(() => (window as unknown as { __fidelity: Fidelity }).__fidelity)
}

function row(browser: string, f: Fidelity, launchMs: number): Record<string, string | number> {
  const failing = Object.entries(f.signals).filter(([, s]) => s.pass === false).map(([k]) => k)
  return { browser, 'signals passed': `${f.passed}/${f.total}`, 'launch → page': `${launchMs.toFixed(0)} ms`, failing: failing.join(', ') || '-' }
}

async function viaPod(kind: BrowserKind): Promise<{ f: Fidelity; ms: number }> {
  const t0 = performance.now()
  const pod = await startPod({ token: 'bench', browserKind: kind, sandbox: process.getuid?.() === 0 ? 'none' : 'chromium' }) // in this process, maybe root: Chromium's sandbox refuses root
  try {
    await pod.session.configure({ sessionId: `nsess_bench${kind}`, egress: { mode: 'platform', declaredHosts: [] } })
    const ms = performance.now() - t0
    return { f: await measure(pod.session.page), ms }
  } finally {
    await pod.close()
  }
}

export async function benchCloak(): Promise<Array<Record<string, string | number>>> {
  const t0 = performance.now()
  const browser = await chromium.launch({ executablePath: process.env.NIGHTJAR_CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox'] })
  let stock: Fidelity
  let stockMs: number
  try {
    const page = await browser.newPage()
    stockMs = performance.now() - t0
    stock = await measure(page)
  } finally {
    await browser.close()
  }
  const pod = await viaPod('chromium')
  const cloak = await viaPod('cloak')
  return [
    row('stock headless (baseline)', stock, stockMs),
    row('nightjar chromium pod', pod.f, pod.ms),
    row('nightjar cloak pod', cloak.f, cloak.ms),
  ]
}
