// CDP connect benchmark, beside a raw playwright-core baseline measured in the same run:
// the whole life of a session driven over CDP — session_start (warm pool) → session_cdp →
// connectOverCDP through the api-server's relay and the pod's filter → goto a local page
// → close + session_end — against what a client pays for its own browser: chromium.launch
// → newPage → goto → close. Runs alternate one by one, so a load change on this shared
// machine hits both sides alike; the pool is given time to refill between runs (not timed),
// as between an agent's sessions, and each side starts only once the pool is full and no pod
// is launching or exiting (so neither pays for the other's clean-up).
import { chromium } from 'playwright-core'
import { startBench, percentile, progress, ms, type Bench } from './harness.ts'
import { CHROMIUM_TEST_ARGS } from '../test/helpers/chromium.ts'

const RUNS = 50
const WARMUP = 3
const POOL = 2
const PAGE = 'data:text/html,' + encodeURIComponent(
  `<title>Catalogue</title><h1>Catalogue</h1>` +
  Array.from({ length: 40 }, (_, i) => `<article><h2>Item ${i}</h2><p>Description of item ${i}.</p><button>Add ${i}</button></article>`).join(''),
)

const unclaimed = (b: Bench) => b.plane.pods.processes().filter((p) => !p.sessionId && p.state === 'running').length
const busy = (b: Bench) => b.plane.pods.processes().some((p) => p.state === 'starting' || p.state === 'terminating')

/** the pool full and no pod launching or exiting: each side's run starts on a quiet machine */
async function waitForQuietPool(b: Bench) {
  const deadline = Date.now() + 60_000
  while (unclaimed(b) < POOL || busy(b)) {
    if (Date.now() > deadline) throw new Error('the warm pool did not refill')
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function api(b: Bench, method: string, path: string, body?: unknown) {
  const res = await fetch(b.url + path, { method, headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

export async function benchCdp(): Promise<Array<Record<string, string | number>>> {
  const b = await startBench({ warmPool: POOL })
  try {
    progress(`CDP lifecycle: ${RUNS} runs over CDP and ${RUNS} raw launches, alternating`)
    const total: number[] = []
    const start: number[] = []
    const connect: number[] = []
    const drive: number[] = []
    const release: number[] = []
    const raw: number[] = []
    const viaCdp = async (record: boolean) => {
      await waitForQuietPool(b)
      const t0 = performance.now()
      const session = await api(b, 'POST', '/v1/sessions', {})
      const { url } = await api(b, 'GET', `/v1/sessions/${session.id}/cdp`)
      const t1 = performance.now()
      const browser = await chromium.connectOverCDP(url, { headers: { authorization: `Bearer ${b.apiKey}` } })
      const page = browser.contexts()[0].pages()[0]
      const t2 = performance.now()
      await page.goto(PAGE)
      const t3 = performance.now()
      await browser.close()
      await api(b, 'DELETE', `/v1/sessions/${session.id}`)
      const t4 = performance.now()
      if (!record) return
      total.push(t4 - t0)
      start.push(t1 - t0)
      connect.push(t2 - t1)
      drive.push(t3 - t2)
      release.push(t4 - t3)
    }
    const rawLaunch = async (record: boolean) => {
      await waitForQuietPool(b) // the pool's refill after our session must not land on the baseline
      const t0 = performance.now()
      const browser = await chromium.launch({ executablePath: process.env.NIGHTJAR_CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_TEST_ARGS })
      const page = await browser.newPage()
      await page.goto(PAGE)
      await browser.close()
      if (record) raw.push(performance.now() - t0)
    }
    for (let i = 0; i < WARMUP; i++) {
      await viaCdp(false)
      await rawLaunch(false)
    }
    for (let i = 0; i < RUNS; i++) {
      // alternate which side goes first, so neither always follows the other's clean-up
      if (i % 2 === 0) {
        await viaCdp(true)
        await rawLaunch(true)
      } else {
        await rawLaunch(true)
        await viaCdp(true)
      }
      if ((i + 1) % 10 === 0) progress(`${i + 1}/${RUNS}`)
    }
    const row = (path: string, v: number[], target: string) => ({ path, n: v.length, p50: ms(percentile(v, 50)), p95: ms(percentile(v, 95)), target })
    return [
      row('nightjar over CDP: session_start → session_cdp → connectOverCDP → goto → close + session_end', total, 'p50 < 300 ms'),
      row('  of which session_start (warm pool) + session_cdp', start, 'report'),
      row('  of which connectOverCDP (api-server relay → pod filter → Chromium)', connect, 'report'),
      row('  of which goto (local data: page)', drive, 'report'),
      row('  of which close + session_end', release, 'report'),
      row('raw playwright-core chromium.launch → newPage → goto → close', raw, 'baseline'),
    ]
  } finally {
    await b.stop()
  }
}
