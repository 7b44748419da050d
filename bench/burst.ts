// Bursts of session starts with the default capacity settings and the default (adaptive)
// warm pool: 20 starts at once from an idle pool of its minimum size, then — once the pool
// has had a minute to grow toward that demand within its memory bound — 20 more. Each row:
// time to a definite answer (live or 429) and to live, p50/p95, how many waited in the
// start queue and how many were refused. The idle-pool row of the same run (one start from
// a settled pool) is the baseline.
import { BurstClient } from '../test/helpers/burst.ts'
import { percentile, progress, ms, startBench, type Bench } from './harness.ts'

const BURST = 20
const ADAPT_MS = 60_000

async function end(b: Bench, id: string) {
  await fetch(`${b.url}/v1/sessions/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${b.apiKey}` } })
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

/** n starts at once, sent from a worker thread (test/helpers/burst-client.mjs says why) */
async function startMany(clients: BurstClient, n: number): Promise<Array<{ status: number; ms: number; id?: string }>> {
  return (await clients.send(n, 'POST', '/v1/sessions', {})).map((r) => ({ status: r.status, ms: r.ms, id: r.body?.id }))
}

async function burst(b: Bench, clients: BurstClient, label: string) {
  progress(`${label}: ${BURST} starts at once (${unclaimed(b)} warm pods ready)`)
  const all = startMany(clients, BURST)
  const [results, queued] = await Promise.all([all, queuedPeak(b, all)])
  const live = results.filter((r) => r.status === 201)
  const answered = results.map((r) => r.ms)
  for (const r of live) await end(b, r.id!)
  return {
    path: label,
    starts: BURST,
    'answer p50': ms(percentile(answered, 50)),
    'answer p95': ms(percentile(answered, 95)),
    'live p50': live.length ? ms(percentile(live.map((r) => r.ms), 50)) : '-',
    'live p95': live.length ? ms(percentile(live.map((r) => r.ms), 95)) : '-',
    live: live.length,
    'queued (peak)': queued,
    refused: results.filter((r) => r.status === 429).length,
  }
}

export async function benchBurst(): Promise<Array<Record<string, string | number>>> {
  const b = await startBench({ warmPool: 2 })
  const clients = new BurstClient({ url: b.url, apiKey: b.apiKey })
  try {
    const settle = async (want: number) => {
      const deadline = Date.now() + 60_000
      while (unclaimed(b) < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      await new Promise((r) => setTimeout(r, 750))
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
    const second = await burst(b, clients, `burst 2: after ${ADAPT_MS / 1000} s of adapting`)
    return [
      { path: 'one start, idle pool (baseline)', starts: idle.length, 'answer p50': ms(percentile(idle, 50)), 'answer p95': ms(percentile(idle, 95)), 'live p50': ms(percentile(idle, 50)), 'live p95': ms(percentile(idle, 95)), live: idle.length, 'queued (peak)': 0, refused: 0 },
      first,
      { ...second, path: `${second.path} (target: live p50 < 100 ms, p95 < 500 ms)` },
    ]
  } finally {
    await clients.close()
    await b.stop()
  }
}
