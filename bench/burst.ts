// Bursts of session starts with the default capacity settings and the adaptive warm pool:
// 20 starts at once from an idle pool of its minimum size, then 20 more in five rounds once
// the pool has grown. Each row: time to a definite answer (live or 429) and to live, p50/p95,
// queued and refused; the idle-pool row of the same run is the baseline. Rounds, because one
// round's median moves with whatever else the VM runs: bench/README.md#how-each-bench-measures
import { readFileSync } from 'node:fs'
import { START_WAIT_MAX_SECS } from '../contracts/operations/sessions.ts'
import { BurstClient } from '../test/helpers/burst.ts'
import { percentile, progress, ms, startBench, type Bench } from './harness.ts'

const BURST = 20
const ADAPT_MS = 60_000
/** rounds of the second burst, the pool refilled before each */
const ROUNDS = 5

async function end(b: Bench, id: string) {
  await fetch(`${b.url}/v1/sessions/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${b.apiKey}` } })
}

/** the machine's busy CPU share over the next `windowMs`, from /proc/stat (undefined elsewhere) */
async function busyShare(windowMs: number): Promise<number | undefined> {
  const read = () => {
    try {
      const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
      return { idle: f[3] + f[4], total: f.reduce((a, v) => a + v, 0) }
    } catch {
      return undefined
    }
  }
  const a = read()
  await new Promise((r) => setTimeout(r, windowMs))
  const b = read()
  if (!a || !b || b.total === a.total) return undefined
  return 1 - (b.idle - a.idle) / (b.total - a.total)
}

/**
 * Until the machine is quiet: a refilled pod reports ready while its Chromium still works
 * on its first page and start-up tasks for a second or more, and a round begun then measures
 * the refill's tail, not the burst (measured: rounds begun at 60–85% busy took up to twice
 * as long as rounds begun quiet). The first round, after a minute of adapting, starts quiet.
 */
async function quiet(): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const share = await busyShare(250)
    if (share === undefined || share < 0.2) return
  }
}

const unclaimed = (b: Bench) => b.plane.pods.processes().filter((p) => !p.sessionId && p.state === 'running').length

/**
 * The most starts waiting for a launch slot at once, read in-process every 10 ms: polling
 * /metrics over HTTP, as before, took a share of the very event loop the burst is measured on.
 */
async function queuedPeak(b: Bench, during: Promise<unknown>): Promise<number> {
  let peak = 0
  let done = false
  void during.finally(() => (done = true))
  while (!done) {
    peak = Math.max(peak, b.services.admission.stats.queued)
    await new Promise((r) => setTimeout(r, 10))
  }
  return peak
}

/**
 * n starts at once, sent from a worker thread (test/helpers/burst-client.mjs says why). Each
 * waits until live (a REST start otherwise answers 202 pending after 5 s): the bench measures
 * the time to live or to a refusal, and ends every session it started.
 */
async function startMany(clients: BurstClient, n: number): Promise<Array<{ status: number; ms: number; id?: string }>> {
  return (await clients.send(n, 'POST', '/v1/sessions', { waitSeconds: START_WAIT_MAX_SECS })).map((r) => ({ status: r.status, ms: r.ms, id: r.body?.id }))
}

interface BurstResult {
  answered: number[]
  live: number[]
  queued: number
  refused: number
  /** the machine's busy CPU share in the quarter second before the burst */
  busyBefore?: number
}

async function burst(b: Bench, clients: BurstClient, label: string): Promise<BurstResult> {
  const busyBefore = await busyShare(250)
  progress(`${label}: ${BURST} starts at once (${unclaimed(b)} warm pods ready, machine ${busyBefore === undefined ? '?' : Math.round(busyBefore * 100) + '%'} busy)`)
  const all = startMany(clients, BURST)
  const [results, queued] = await Promise.all([all, queuedPeak(b, all)])
  const live = results.filter((r) => r.status === 201)
  // a start still pending at the wait's end is ended too, or it would hold the org's quota
  for (const r of results) if (r.id) await end(b, r.id)
  return { answered: results.map((r) => r.ms), live: live.map((r) => r.ms), queued, refused: results.filter((r) => r.status === 429).length, busyBefore }
}

function row(path: string, r: BurstResult): Record<string, string | number> {
  return {
    path,
    starts: r.answered.length,
    'answer p50': ms(percentile(r.answered, 50)),
    'answer p95': ms(percentile(r.answered, 95)),
    'live p50': r.live.length ? ms(percentile(r.live, 50)) : '-',
    'live p95': r.live.length ? ms(percentile(r.live, 95)) : '-',
    live: r.live.length,
    'queued (peak)': r.queued,
    refused: r.refused,
    'busy before': r.busyBefore === undefined ? '-' : `${Math.round(r.busyBefore * 100)}%`,
  }
}

/** the median of the rounds (ROUNDS is odd: the middle one) */
const median = (values: number[]) => percentile(values, 50)

export async function benchBurst(): Promise<Array<Record<string, string | number>>> {
  const b = await startBench({ warmPool: 2 })
  const clients = new BurstClient({ url: b.url, apiKey: b.apiKey })
  try {
    const settle = async (want: number) => {
      const deadline = Date.now() + 60_000
      while (unclaimed(b) < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      await new Promise((r) => setTimeout(r, 750))
      await quiet()
    }
    await settle(2)
    const idle: number[] = []
    for (let i = 0; i < 6; i++) {
      const [r] = await startMany(clients, 1)
      if (i >= 1) idle.push(r.ms)
      await end(b, r.id!)
      await settle(2)
    }
    const first = await burst(b, clients, 'burst 1: from the minimum pool')
    progress(`letting the pool adapt for ${ADAPT_MS / 1000} s`)
    const adaptUntil = Date.now() + ADAPT_MS
    while (Date.now() < adaptUntil) await new Promise((r) => setTimeout(r, 1000))
    const adapted = unclaimed(b)
    const rounds: BurstResult[] = []
    for (let i = 1; i <= ROUNDS; i++) {
      // every round from the pool the minute of adapting built (refilled after the last)
      if (i > 1) await settle(adapted)
      rounds.push(await burst(b, clients, `burst 2, round ${i} of ${ROUNDS}`))
    }
    // a round in which nothing went live counts as infinitely slow, never as skipped
    const p50s = rounds.map((r) => (r.live.length ? percentile(r.live, 50) : Infinity))
    const p95s = rounds.map((r) => (r.live.length ? percentile(r.live, 95) : Infinity))
    return [
      row('one start, idle pool (baseline)', { answered: idle, live: idle, queued: 0, refused: 0 }),
      row('burst 1: from the minimum pool', first),
      ...rounds.map((r, i) => row(`burst 2 (after ${ADAPT_MS / 1000} s of adapting, ${adapted} warm), round ${i + 1}`, r)),
      {
        path: `burst 2: median of the ${ROUNDS} rounds (target: live p50 < 100 ms, p95 < 500 ms)`,
        starts: rounds.reduce((n, r) => n + r.answered.length, 0),
        'answer p50': ms(median(rounds.map((r) => percentile(r.answered, 50)))),
        'answer p95': ms(median(rounds.map((r) => percentile(r.answered, 95)))),
        'live p50': ms(median(p50s)),
        'live p95': `${ms(median(p95s))} (worst ${ms(Math.max(...p95s))})`,
        live: rounds.reduce((n, r) => n + r.live.length, 0),
        'queued (peak)': Math.max(...rounds.map((r) => r.queued)),
        refused: rounds.reduce((n, r) => n + r.refused, 0),
        'busy before': '-',
      },
    ]
  } finally {
    await clients.close()
    await b.stop()
  }
}
