// Live view benchmark: frames per second at 1280×720 while the page animates, and the latency
// from a page change to the frame at the console's viewer, beside a raw CDP screencast of a
// local Chromium on the same page in the same run (the ceiling: no pod, no relay, no JSON hop).
// How the viewer and the change are made: bench/README.md#how-each-bench-measures
import { chromium, type CDPSession } from 'playwright-core'
import { WebSocket } from 'ws'
import { startBench, percentile, progress, ms, type Bench } from './harness.ts'
import { CHROMIUM_TEST_ARGS } from '../test/helpers/chromium.ts'

const VIEWPORT = { width: 1280, height: 720 }
const FPS_SECONDS = 5
const CHANGES = 30
const PAGE = 'data:text/html,' + encodeURIComponent(`<title>live</title><body style="margin:0;font:48px sans-serif">
<div id="box" style="width:1280px;height:720px;display:grid;place-items:center">still</div>
<script>
  let spin = false
  window.startSpin = () => { spin = true; const step = (t) => { if (!spin) return; box.style.background = 'hsl(' + (t / 5 % 360) + ',70%,60%)'; box.textContent = Math.round(t); requestAnimationFrame(step) }; requestAnimationFrame(step) }
  window.stopSpin = () => { spin = false }
  window.change = (n) => { box.style.background = n % 2 ? '#123456' : '#fedcba'; box.textContent = 'change ' + n }
</script>`)

/** frame arrival times, from whichever source; `next()` resolves at the next frame */
class FrameClock {
  readonly times: number[] = []
  #waiters: Array<(t: number) => void> = []
  frame(): void {
    const t = performance.now()
    this.times.push(t)
    for (const w of this.#waiters.splice(0)) w(t)
  }
  next(): Promise<number> {
    return new Promise((r) => this.#waiters.push(r))
  }
  countBetween(a: number, b: number): number {
    return this.times.filter((t) => t >= a && t < b).length
  }
}

async function measure(clock: FrameClock, spin: (on: boolean) => Promise<unknown>, change: (n: number) => Promise<unknown>) {
  await spin(true)
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, FPS_SECONDS * 1000)) // a fixed window to count frames in, not a synchronisation
  const fps = clock.countBetween(t0, performance.now()) / FPS_SECONDS
  await spin(false)
  await new Promise((r) => setTimeout(r, 300)) // let the last animation frames drain out of the counts
  const latency: number[] = []
  for (let n = 0; n < CHANGES; n++) {
    const arrived = clock.next()
    const sent = performance.now()
    await change(n)
    latency.push((await arrived) - sent)
  }
  return { fps, latency }
}

async function consoleCookie(b: Bench): Promise<string> {
  const browser = await chromium.launch({ executablePath: process.env.NIGHTJAR_CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_TEST_ARGS })
  try {
    const page = await browser.newPage()
    await page.goto(`${b.url}/console/login`)
    await page.fill('#email', 'bench@bench.test')
    await page.fill('#password', 'bench password')
    await page.click('button[type=submit]')
    await page.waitForURL((u) => !u.pathname.endsWith('/login'))
    const c = (await page.context().cookies()).find((x) => x.name === 'nj_console')
    if (!c) throw new Error('no console session cookie after sign-in')
    return `${c.name}=${c.value}`
  } finally {
    await browser.close()
  }
}

export async function benchLive(): Promise<Array<Record<string, string | number>>> {
  const b = await startBench({ warmPool: 1 })
  try {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(b.url + path, { method, headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
      return res.json()
    }
    progress('live view: a session at 1280×720, watched through the console')
    const session = await api('POST', '/v1/sessions', { viewport: VIEWPORT })
    await api('POST', `/v1/sessions/${session.id}/navigate`, { url: PAGE })
    const cookie = await consoleCookie(b)
    const viewer = new FrameClock()
    const ws = new WebSocket(`${b.url.replace(/^http/, 'ws')}/console/sessions/${session.id}/live`, { headers: { cookie, origin: b.url }, perMessageDeflate: false })
    let bytes = 0
    ws.on('message', (data) => {
      const text = data.toString()
      if (text.startsWith('{"type":"frame"')) {
        bytes += text.length
        viewer.frame()
      }
    })
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject) })
    await viewer.next() // the first picture: the stream is up
    const evaluate = (expression: string) => api('POST', `/v1/sessions/${session.id}/evaluate`, { expression })
    const bytesBefore = bytes
    const started = performance.now()
    const viaConsole = await measure(viewer, (on) => evaluate(on ? 'startSpin()' : 'stopSpin()'), (n) => evaluate(`change(${n})`))
    const kibPerSec = (bytes - bytesBefore) / 1024 / ((performance.now() - started) / 1000)
    ws.close()
    await api('DELETE', `/v1/sessions/${session.id}`)

    progress('baseline: a raw CDP screencast of a local Chromium, same page and viewport')
    const browser = await chromium.launch({ executablePath: process.env.NIGHTJAR_CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_TEST_ARGS })
    let raw: Awaited<ReturnType<typeof measure>>
    try {
      const page = await browser.newPage({ viewport: VIEWPORT })
      await page.goto(PAGE)
      const cdp: CDPSession = await page.context().newCDPSession(page)
      const clock = new FrameClock()
      cdp.on('Page.screencastFrame', (f) => {
        clock.frame()
        void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {}) // the page closed at the end of the run: no more frames either way
      })
      await cdp.send('Page.startScreencast', { format: 'jpeg', quality: 60, everyNthFrame: 1 })
      await clock.next()
      raw = await measure(clock, (on) => page.evaluate(on ? 'startSpin()' : 'stopSpin()'), (n) => page.evaluate(`change(${n})`))
    } finally {
      await browser.close()
    }
    const row = (path: string, r: { fps: number; latency: number[] }, target: string, extra: Record<string, string> = {}) => ({
      path, fps: r.fps.toFixed(1), 'latency p50': ms(percentile(r.latency, 50)), 'latency p95': ms(percentile(r.latency, 95)), ...extra, target,
    })
    return [
      row('console live view (pod screencast → api-server relay → viewer WebSocket)', viaConsole, '≥ 10 fps, p50 < 150 ms', { 'KiB/s to the viewer': kibPerSec.toFixed(0) }),
      row('raw CDP screencast of a local Chromium (baseline)', raw, 'baseline', { 'KiB/s to the viewer': '-' }),
    ]
  } finally {
    await b.stop()
  }
}
