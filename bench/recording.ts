// Recording overhead: the same drive loops on a recorded session beside an unrecorded one,
// both live at once and driven in alternating blocks so a load change hits both — the drive
// benchmark's round (MCP navigate + perceive, bench/sessions.ts) and a harder one (a click that
// adds 20 elements, then perceive); plus what a recorded minute costs: bytes stored and the
// pod's CPU (user+system time per minute from /proc, recorded pod beside unrecorded pod).
// A third session, filmed as video (webm, 5 fps), runs the same loops in the same blocks:
// its driving latency, its pod's CPU with the ffmpeg child, and the video's bytes a minute.
import { readFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
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
    progress(`recording overhead: ${ROUNDS} rounds of two drive loops on a recorded, a filmed (video) and an unrecorded session, rotating blocks`)
    const recorded = await api(b, 'POST', '/v1/sessions', { record: true })
    const plain = await api(b, 'POST', '/v1/sessions', {})
    const filmed = await api(b, 'POST', '/v1/sessions', { video: true })
    const filmedFrom = performance.now()
    const ids = { rec: recorded.id as string, video: filmed.id as string, plain: plain.id as string }
    type Side = keyof typeof ids
    const pidOf = (id: string) => b.plane.pods.processes().find((p) => p.sessionId === id)!.pid!
    const mcp = new Client({ name: 'bench', version: '1' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(b.url + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${b.apiKey}` } } }))
    const loops = {
      // the drive benchmark's round
      drive: async (id: string) => {
        await mcp.callTool({ name: 'navigate', arguments: { sessionId: id, url: PAGE } })
        await mcp.callTool({ name: 'perceive', arguments: { sessionId: id } })
      },
      mutate: async (id: string) => {
        await api(b, 'POST', `/v1/sessions/${id}/navigate`, { url: PAGE })
        await api(b, 'POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#more' })
        await api(b, 'POST', `/v1/sessions/${id}/perceive`, {})
      },
    }
    for (let i = 0; i < 3; i++) {
      for (const loop of Object.values(loops)) {
        for (const id of Object.values(ids)) await loop(id)
      }
    }
    // the pod's tree: the pod process, its Chromium and (filmed) its ffmpeg
    const cpu0 = { rec: treeCpu(pidOf(ids.rec)), video: treeCpu(pidOf(ids.video)), plain: treeCpu(pidOf(ids.plain)) }
    const t0 = performance.now()
    const samples = () => ({ rec: [] as number[], video: [] as number[], plain: [] as number[] })
    const times = { drive: samples(), mutate: samples() }
    const sides: Side[] = ['rec', 'video', 'plain']
    for (let block = 0; block < ROUNDS / BLOCK; block++) {
      // each side goes first, second and last in turn, so a load change hits all three
      const order = sides.map((_, i) => sides[(i + block) % sides.length])
      for (const kind of ['drive', 'mutate'] as const) {
        for (const side of order) {
          for (let i = 0; i < BLOCK; i++) {
            const s = performance.now()
            await loops[kind](ids[side])
            times[kind][side].push(performance.now() - s)
          }
        }
      }
    }
    await mcp.close()
    const minutes = (performance.now() - t0) / 60_000
    const cpu = { rec: treeCpu(pidOf(ids.rec)) - cpu0.rec, video: treeCpu(pidOf(ids.video)) - cpu0.video, plain: treeCpu(pidOf(ids.plain)) - cpu0.plain }
    const filmedMinutes = (performance.now() - filmedFrom) / 60_000
    for (const id of Object.values(ids)) await api(b, 'DELETE', `/v1/sessions/${id}`)
    const download = await fetch(`${b.url}/v1/sessions/${ids.video}/video`, { headers: { authorization: `Bearer ${b.apiKey}` } })
    if (!download.ok) throw new Error(`the filmed session's video: ${download.status} ${await download.text()}`)
    const videoBytes = (await download.arrayBuffer()).byteLength
    const meta = await api(b, 'GET', `/v1/sessions/${recorded.id}/recording`)
    const span = (Date.parse(meta.endedAt) - Date.parse(meta.startedAt)) / 60_000
    // the targets: a recording within 1.2× of the unrecorded latency, a video within 10%
    const bound = { rec: 1.2, video: 1.1 }
    const row = (kind: 'drive' | 'mutate', side: Side, path: string, extra: Record<string, string>) => {
      const p50 = percentile(times[kind][side], 50)
      const base = percentile(times[kind].plain, 50)
      return { path, n: times[kind][side].length, p50: ms(p50), p95: ms(percentile(times[kind][side], 95)), ...extra, target: side === 'plain' ? 'baseline' : `≤ ${bound[side]}× unrecorded: ${(p50 / base).toFixed(2)}×` }
    }
    const stored = { rec: (meta.bytes / 1024 / span).toFixed(0), video: (videoBytes / 1024 / filmedMinutes).toFixed(0), plain: '-' }
    const costs = (side: Side) => ({ 'pod CPU s / min': (cpu[side] / minutes).toFixed(1), 'stored KiB / recorded min': stored[side] })
    const none = { 'pod CPU s / min': '', 'stored KiB / recorded min': '' }
    return [
      row('drive', 'rec', 'drive round (MCP navigate + perceive), recorded', none),
      row('drive', 'video', 'drive round, filmed (video, webm 5 fps)', none),
      row('drive', 'plain', 'drive round, not recorded (baseline)', none),
      row('mutate', 'rec', 'navigate + click adding 20 elements + perceive, recorded', none),
      row('mutate', 'video', 'navigate + click + perceive, filmed', none),
      row('mutate', 'plain', 'navigate + click + perceive, not recorded (baseline)', none),
      { path: 'both loops, recorded session', n: '', p50: '', p95: '', ...costs('rec'), target: 'report' },
      { path: 'both loops, filmed session (pod with ffmpeg; KiB of video)', n: '', p50: '', p95: '', ...costs('video'), target: 'report' },
      { path: 'both loops, unrecorded session', n: '', p50: '', p95: '', ...costs('plain'), target: 'baseline' },
    ]
  } finally {
    await b.stop()
  }
}
