// Bursts of session starts with the default capacity settings and the default (adaptive)
// warm pool: 20 starts at once from an idle pool of its minimum size, then — once the pool
// has had a minute to grow toward that demand within its memory bound — 20 more. Each row:
// time to a definite answer (live or 429) and to live, p50/p95, how many waited in the
// start queue and how many were refused. The idle-pool row of the same run (one start from
// a settled pool) is the baseline.
import { percentile, progress, ms, startBench, type Bench } from './harness.ts'

const BURST = 20
const ADAPT_MS = 60_000

async function start(b: Bench): Promise<{ status: number; ms: number; id?: string }> {
  const t0 = performance.now()
  const res = await fetch(b.url + '/v1/sessions', { method: 'POST', headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' }, body: '{}' })
  const body = (await res.json()) as { id?: string }
  return { status: res.status, ms: performance.now() - t0, id: body.id }
}

async function end(b: Bench, id: string) {
  await fetch(`${b.url}/v1/sessions/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${b.apiKey}` } })
}

const unclaimed = (b: Bench) => b.plane.pods.processes().filter((p) => !p.sessionId && p.state === 'running').length

async function queuedPeak(b: Bench, during: Promise<unknown>): Promise<number> {
  let peak = 0
  let done = false
  void during.finally(() => (done = true))
  while (!done) {
    const text = await (await fetch(`${b.url}/metrics`)).text()
    peak = Math.max(peak, Number(/^nightjar_session_starts_queued (\d+)/m.exec(text)?.[1] ?? 0))
    await new Promise((r) => setTimeout(r, 25))
  }
  return peak
}

async function burst(b: Bench, label: string) {
  progress(`${label}: ${BURST} starts at once (${unclaimed(b)} warm pods ready)`)
  const all = Promise.all(Array.from({ length: BURST }, () => start(b)))
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
  try {
    const settle = async (want: number) => {
      const deadline = Date.now() + 60_000
      while (unclaimed(b) < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      await new Promise((r) => setTimeout(r, 750))
    }
    await settle(2)
    const idle: number[] = []
    for (let i = 0; i < 6; i++) {
      const r = await start(b)
      if (i >= 1) idle.push(r.ms)
      await end(b, r.id!)
      await settle(2)
    }
    const first = await burst(b, 'burst 1: from the minimum pool')
    progress(`letting the pool adapt for ${ADAPT_MS / 1000} s`)
    const adaptUntil = Date.now() + ADAPT_MS
    while (Date.now() < adaptUntil) await new Promise((r) => setTimeout(r, 1000))
    const second = await burst(b, `burst 2: after ${ADAPT_MS / 1000} s of adapting`)
    return [
      { path: 'one start, idle pool (baseline)', starts: idle.length, 'answer p50': ms(percentile(idle, 50)), 'answer p95': ms(percentile(idle, 95)), 'live p50': ms(percentile(idle, 50)), 'live p95': ms(percentile(idle, 95)), live: idle.length, 'queued (peak)': 0, refused: 0 },
      first,
      { ...second, path: `${second.path} (target: live p50 < 100 ms, p95 < 500 ms)` },
    ]
  } finally {
    await b.stop()
  }
}
