// Recording overhead (issue #17): the same drive loop — navigate to a page, click a button
// that changes it, perceive — on a recorded session beside an unrecorded one, both live at
// once and driven in alternating blocks so a load change hits both; plus what a recorded
// minute costs: bytes stored and the pod's CPU (its process's user+system time per minute,
// read from /proc, recorded pod beside unrecorded pod).
import { readFileSync } from 'node:fs'
import { startBench, percentile, progress, ms, type Bench } from './harness.ts'

const ROUNDS = 60
const BLOCK = 5
const PAGE = 'data:text/html,' + encodeURIComponent(
  `<title>Catalogue</title><h1>Catalogue</h1><button id="more" onclick="for (let i = 0; i < 20; i++) { const a = document.createElement('article'); a.innerHTML = '<h2>Item ' + i + '</h2><p>Description of item ' + i + '.</p>'; document.body.append(a) }">More</button>` +
  Array.from({ length: 40 }, (_, i) => `<article><h2>Item ${i}</h2><p>Description of item ${i}.</p><button>Add ${i}</button></article>`).join(''),
)

async function api(b: Bench, method: string, path: string, body?: unknown) {
  const res = await fetch(b.url + path, { method, headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

/** CPU seconds (user + system) of a process and its children that have exited, from /proc */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
  return ticks / 100
}

/** every process in the pod's tree (the pod process and its Chromium) */
function treeCpu(root: number): number {
  let total = 0
  const walk = (pid: number) => {
    try {
      total += cpuSeconds(pid)
      const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
      for (const k of kids) walk(k)
    } catch {
      // a process that exited meanwhile: its time is in its parent's counts
    }
  }
  walk(root)
  return total
}

export async function benchRecording(): Promise<Array<Record<string, string | number>>> {
  const b = await startBench({ warmPool: 2 })
  try {
    progress(`recording overhead: ${ROUNDS} drive rounds on a recorded and an unrecorded session, alternating blocks`)
    const recorded = await api(b, 'POST', '/v1/sessions', { record: true })
    const plain = await api(b, 'POST', '/v1/sessions', {})
    const pidOf = (id: string) => b.plane.pods.processes().find((p) => p.sessionId === id)!.pid!
    const round = async (id: string) => {
      await api(b, 'POST', `/v1/sessions/${id}/navigate`, { url: PAGE })
      await api(b, 'POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#more' })
      await api(b, 'POST', `/v1/sessions/${id}/perceive`, {})
    }
    for (let i = 0; i < 3; i++) {
      await round(recorded.id)
      await round(plain.id)
    }
    const cpu0 = { rec: treeCpu(pidOf(recorded.id)), plain: treeCpu(pidOf(plain.id)) }
    const t0 = performance.now()
    const times = { rec: [] as number[], plain: [] as number[] }
    for (let block = 0; block < ROUNDS / BLOCK; block++) {
      const order = block % 2 === 0 ? (['rec', 'plain'] as const) : (['plain', 'rec'] as const)
      for (const side of order) {
        for (let i = 0; i < BLOCK; i++) {
          const s = performance.now()
          await round(side === 'rec' ? recorded.id : plain.id)
          times[side].push(performance.now() - s)
        }
      }
    }
    const minutes = (performance.now() - t0) / 60_000
    const cpu = { rec: treeCpu(pidOf(recorded.id)) - cpu0.rec, plain: treeCpu(pidOf(plain.id)) - cpu0.plain }
    await api(b, 'DELETE', `/v1/sessions/${recorded.id}`)
    await api(b, 'DELETE', `/v1/sessions/${plain.id}`)
    const meta = await api(b, 'GET', `/v1/sessions/${recorded.id}/recording`)
    const span = (Date.parse(meta.endedAt) - Date.parse(meta.startedAt)) / 60_000
    const p50 = { rec: percentile(times.rec, 50), plain: percentile(times.plain, 50) }
    return [
      { path: 'drive round (navigate + click + perceive), recorded', n: times.rec.length, p50: ms(p50.rec), p95: ms(percentile(times.rec, 95)), 'pod CPU s / min': (cpu.rec / minutes).toFixed(1), 'stored KiB / recorded min': (meta.bytes / 1024 / span).toFixed(0), target: `≤ 1.2× unrecorded: ${(p50.rec / p50.plain).toFixed(2)}×` },
      { path: 'drive round, not recorded (baseline)', n: times.plain.length, p50: ms(p50.plain), p95: ms(percentile(times.plain, 95)), 'pod CPU s / min': (cpu.plain / minutes).toFixed(1), 'stored KiB / recorded min': '-', target: 'baseline' },
    ]
  } finally {
    await b.stop()
  }
}
