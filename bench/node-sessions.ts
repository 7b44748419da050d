// npm run bench -- node, second half: whole sessions on the real node, the chart installed
// as the README says, beside the same calls against `npm start`'s embedded runtime in the
// same run. Each round waits for an idle warm pool on both sides, then times
//   session_start (warm pool) → MCP connect → CDP connect → goto → release (close + end),
// the lifecycle public benchmarks report for hosted browsers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { clusterShell, freshDatabase, readmeInstall, rolledOut } from '../test/node/install.ts'
import { KUBECTL, ROOT, type RealCluster } from '../test/node/real-cluster.ts'
import { waitFor } from '../test/helpers/wait.ts'
import { ms, percentile, progress, startBench } from './harness.ts'

const ROUNDS = 20
const WARMUP = 2
const POOL = 2
const NS = 'nightjar'
const PAGE = 'data:text/html,' + encodeURIComponent('<title>Lifecycle</title><h1>Lifecycle</h1><p>A page to reach.</p>')

type Row = Record<string, string | number>
interface Side { url: string; apiKey: string; idle(): Promise<void> }
interface Timings { start: number[]; mcp: number[]; cdp: number[]; goto: number[]; release: number[]; total: number[] }

/** one lifecycle against a side; returns each step's time */
async function lifecycle(side: Side): Promise<Record<keyof Timings, number>> {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(side.url + path, { method, headers: { authorization: `Bearer ${side.apiKey}`, prefer: 'wait=90', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${(await r.text()).slice(0, 200)}`)
    return r.json() as Promise<any>
  }
  const t0 = performance.now()
  const session = await call('POST', '/v1/sessions', {})
  const t1 = performance.now()
  const mcp = new Client({ name: 'bench-lifecycle', version: '1' })
  await mcp.connect(new StreamableHTTPClientTransport(new URL(side.url + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${side.apiKey}` } } }))
  const t2 = performance.now()
  const { url } = await call('GET', `/v1/sessions/${session.id}/cdp`)
  // the URL is on the server's base URL; the README's is a placeholder host, so the same
  // path is reached on the address this bench uses (the Service, or the embedded server)
  const cdpUrl = new URL(url)
  const base = new URL(side.url)
  cdpUrl.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:'
  cdpUrl.host = base.host
  const browser = await chromium.connectOverCDP(cdpUrl.toString(), { headers: { authorization: `Bearer ${side.apiKey}` } })
  const page = browser.contexts()[0]!.pages()[0]!
  const t3 = performance.now()
  await page.goto(PAGE)
  const t4 = performance.now()
  await browser.close()
  await mcp.close()
  await call('DELETE', `/v1/sessions/${session.id}`)
  const t5 = performance.now()
  return { start: t1 - t0, mcp: t2 - t1, cdp: t3 - t2, goto: t4 - t3, release: t5 - t4, total: t5 - t0 }
}

/** the chart installed on the real node as the README says, a warm pool of POOL */
async function installed(cluster: RealCluster, cleanups: (() => unknown)[]): Promise<Side> {
  const { sh, kubectlJson } = clusterShell(cluster.kubeconfig, NS)
  await sh(`${KUBECTL} delete namespace ${NS} --ignore-not-found --timeout=180s`)
  const dbUrl = await freshDatabase(cluster.databaseUrl, { teardown: (fn) => cleanups.push(fn) })
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-bench-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const values = join(dir, 'values.json')
  writeFileSync(values, JSON.stringify({ browserPods: { warmPoolSize: POOL } }))
  cleanups.push(() => sh(`helm uninstall nightjar -n ${NS} --wait=false; ${KUBECTL} delete namespace ${NS} --timeout=180s`))
  const commands = readmeInstall(join(ROOT, 'README.md'), dbUrl, values)
  let out = ''
  for (const [i, cmd] of commands.entries()) {
    if (i === commands.length - 1) await rolledOut(cluster.kubeconfig, NS, ['nightjar-api-server', 'nightjar-operator'])
    const r = await sh(cmd)
    // the database URL is a secret of the install: never printed
    if (r.status !== 0) throw new Error(`install: ${cmd.split(' ').slice(0, 4).join(' ')} … failed (${r.status}): ${r.stderr.replaceAll(dbUrl, '<DATABASE_URL>').slice(0, 400)}`)
    out = r.stdout
  }
  const { apiKey } = JSON.parse(out) as { apiKey: string }
  const svc = await kubectlJson(['get', 'service', 'nightjar-api-server'])
  return {
    url: `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`,
    apiKey,
    // the pool full with Ready pods and nothing terminating: a start meets a warm pod and no refill runs beside it
    idle: () => waitFor(async () => {
      const pods = (await kubectlJson(['get', 'pods', '-l', 'app.kubernetes.io/component=browser-pod'])).items
      const warm = pods.filter((p: any) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm' && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
      return warm.length >= POOL && pods.every((p: any) => !p.metadata.deletionTimestamp)
    }, { timeoutMs: 180_000, intervalMs: 250, what: 'the warm pool full and idle' }).then(() => undefined),
  }
}

export async function benchNodeSessions(cluster: RealCluster): Promise<Row[]> {
  const cleanups: (() => unknown)[] = []
  try {
    progress('installing the chart on the real node as the README says')
    const node = await installed(cluster, cleanups)
    const embedded = await startBench({ warmPool: POOL })
    cleanups.push(() => embedded.stop())
    const local: Side = {
      url: embedded.url,
      apiKey: embedded.apiKey,
      idle: () => waitFor(() => embedded.plane.pods.processes().filter((p) => !p.sessionId && p.state === 'running').length >= POOL,
        { timeoutMs: 60_000, intervalMs: 50, what: 'the embedded warm pool full' }).then(() => undefined),
    }
    const empty = (): Timings => ({ start: [], mcp: [], cdp: [], goto: [], release: [], total: [] })
    const results = { node: empty(), embedded: empty() }
    progress(`lifecycle: ${ROUNDS} rounds on the real node and ${ROUNDS} embedded, alternating`)
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      // alternate which side goes first, so neither always follows the other's clean-up
      for (const [name, side] of (i % 2 ? [['embedded', local], ['node', node]] : [['node', node], ['embedded', local]]) as [keyof typeof results, Side][]) {
        await side.idle()
        const r = await lifecycle(side)
        if (i >= WARMUP) for (const k of Object.keys(r) as (keyof Timings)[]) results[name][k].push(r[k])
      }
      if (i >= WARMUP && (i - WARMUP + 1) % 4 === 0) progress(`${i - WARMUP + 1}/${ROUNDS}`)
    }
    const ratio = percentile(results.node.start, 50) / percentile(results.embedded.start, 50)
    const row = (what: string, k: keyof Timings): Row => ({
      what,
      'real node p50': ms(percentile(results.node[k], 50)), 'real node p95': ms(percentile(results.node[k], 95)),
      'embedded p50': ms(percentile(results.embedded[k], 50)), 'embedded p95': ms(percentile(results.embedded[k], 95)),
    })
    return [
      row(`session_start from the warm pool — real node ${ratio.toFixed(2)}× embedded (target ≤ 2×)`, 'start'),
      row('MCP connect (initialize)', 'mcp'),
      row('CDP connect (session_cdp → connectOverCDP)', 'cdp'),
      row('goto (a data: page)', 'goto'),
      row('release (browser close + session_end)', 'release'),
      row('whole lifecycle: create → connect MCP + CDP → goto → release (public: Kernel 365 ms, Browserbase 578 ms, Steel 972 ms)', 'total'),
    ]
  } finally {
    for (const fn of cleanups.reverse()) await Promise.resolve().then(fn).catch((e: Error) => progress(`cleaning up: ${e.message}`))
  }
}
