// What the cluster tests share (not a test file): the cluster test/cluster/main.ts runs for
// the phase (its facts come through NIGHTJAR_TEST_CLUSTER), kubectl and helm against it,
// a Postgres the pods can reach, a "public web" on the cluster bridge, and `helm install`
// of the chart with images the test node maps to this working tree.
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer as createTcpServer, connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, extname, join, normalize } from 'node:path'
import { promisify } from 'node:util'
import { KubeConfig } from '@kubernetes/client-node'
import type { ClusterInfo } from './main.ts'
import { PAGES_DIR } from '../helpers/netns.ts'
import { waitFor } from '../helpers/wait.ts'

const run = promisify(execFile)
export const ROOT = new URL('../../', import.meta.url).pathname
export const HELM = `${ROOT}.tools/helm`
export const KUBECTL = `${ROOT}.tools/kubectl`
export const CHART = `${ROOT}charts/nightjar`

export interface Teardown {
  teardown(fn: () => unknown): void
}

export function cluster(): ClusterInfo {
  const file = process.env.NIGHTJAR_TEST_CLUSTER
  if (!file || !existsSync(file)) throw new Error('NIGHTJAR_TEST_CLUSTER is not set: the cluster tests run with `npm test` or `node scripts/test.mjs test/cluster/<file>` (which start the control plane)')
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterInfo
}

export function adminKubeConfig(info = cluster()): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromFile(info.kubeconfig)
  return kc
}

/** a KubeConfig that authenticates as a bearer token (a ServiceAccount's) */
export function tokenKubeConfig(token: string, info = cluster()): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: info.url, caFile: info.caFile }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  })
  return kc
}

const helmEnv = () => ({ ...process.env, HELM_CACHE_HOME: '/tmp/nightjar-helm/cache', HELM_CONFIG_HOME: '/tmp/nightjar-helm/config', HELM_DATA_HOME: '/tmp/nightjar-helm/data' })

export async function kubectl(args: string[], opts: { input?: string } = {}): Promise<string> {
  const r = spawnSync(KUBECTL, ['--kubeconfig', cluster().kubeconfig, ...args], { encoding: 'utf8', input: opts.input, timeout: 120_000 })
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${(r.stderr || r.stdout).trim()}`)
  return r.stdout
}

export async function kubectlJson<T = any>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T
}

export async function helm(args: string[]): Promise<string> {
  try {
    return (await run(HELM, ['--kubeconfig', cluster().kubeconfig, ...args], { env: helmEnv(), maxBuffer: 32 << 20, timeout: 300_000 })).stdout
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string }
    throw new Error(`helm ${args[0]}: ${(e.stderr || e.stdout || e.message).trim()}`)
  }
}

/** a namespace of its own for a test, deleted (with everything in it) at teardown */
export async function testNamespace(t: Teardown, prefix = 'nj'): Promise<string> {
  const ns = `${prefix}-${randomBytes(3).toString('hex')}`
  await kubectl(['create', 'namespace', ns])
  t.teardown(() => kubectl(['delete', 'namespace', ns, '--wait=false']).catch(() => {}))
  return ns
}

/**
 * A TCP relay from the cluster bridge to a loopback service (the run's Postgres): pods
 * live in their own network namespaces and cannot reach this machine's 127.0.0.1.
 */
export async function bridgeRelay(t: Teardown, target: { host: string; port: number }, info = cluster()): Promise<{ host: string; port: number }> {
  const sockets = new Set<Socket>()
  const server = createTcpServer((inbound) => {
    const outbound = connect(target.port, target.host)
    for (const s of [inbound, outbound]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {
        inbound.destroy()
        outbound.destroy()
      })
    }
    inbound.pipe(outbound).pipe(inbound)
  })
  await new Promise<void>((r) => server.listen(0, info.network.hostIp, () => r()))
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return { host: info.network.hostIp, port: (server.address() as { port: number }).port }
}

/** the run's Postgres (scripts/test.mjs), as a pod would address a database of its own */
export async function podDatabaseUrl(t: Teardown, localUrl: string): Promise<string> {
  const u = new URL(localUrl)
  const relay = await bridgeRelay(t, { host: u.hostname, port: Number(u.port) })
  u.hostname = relay.host
  u.port = String(relay.port)
  return u.toString()
}

export interface BridgeWeb {
  ip: string
  requests: { method: string; host: string; url: string }[]
  close(): Promise<void>
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png' }

/**
 * The "public web" for browser pods: an address in 198.18.255.0/24 (the benchmarking
 * range, which platform egress treats as public) added to the cluster bridge, serving
 * test/fixtures/pages. Browser pods reach it through their default route to the host, the
 * way pods reach the internet through a node; no forwarding is switched on anywhere.
 */
export async function bridgeWeb(t: Teardown, info = cluster(), opts: { keepAliveMs?: number } = {}): Promise<BridgeWeb> {
  const taken = (await run('ip', ['-4', '-o', 'addr', 'show'])).stdout
  let ip = ''
  for (let i = 0; i < 64 && !ip; i++) {
    const candidate = `198.18.255.${2 + (randomBytes(1)[0] % 250)}`
    if (!taken.includes(` ${candidate}/`)) ip = candidate
  }
  if (!ip) throw new Error('no free address in 198.18.255.0/24')
  await run('ip', ['addr', 'add', `${ip}/32`, 'dev', info.network.bridge])
  const requests: BridgeWeb['requests'] = []
  const server: Server = createHttpServer((req, res) => {
    const u = new URL(req.url ?? '/', `http://${req.headers.host ?? 'x'}`)
    requests.push({ method: req.method ?? 'GET', host: req.headers.host ?? '', url: req.url ?? '/' })
    if (u.pathname === '/redirect') {
      res.writeHead(Number(u.searchParams.get('status') || 302), { location: u.searchParams.get('to') || '/' })
      return res.end()
    }
    const file = normalize(join(PAGES_DIR, u.pathname === '/' ? 'index.html' : u.pathname))
    if (!file.startsWith(PAGES_DIR) || !existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' })
      return res.end('not found')
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
    res.end(readFileSync(file))
  })
  if (opts.keepAliveMs !== undefined) server.keepAliveTimeout = opts.keepAliveMs
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(80, ip, () => resolve())
  })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
    await run('ip', ['addr', 'del', `${ip}/32`, 'dev', info.network.bridge]).catch(() => {})
  }
  t.teardown(close)
  return { ip, requests, close }
}

export interface Install {
  namespace: string
  release: string
  /** http://<api-server Service ClusterIP> (the test node proxies ClusterIPs on the bridge) */
  apiUrl: string
  databaseUrl: string
  fullname: string
}

/**
 * `helm install` of the chart as a platform team would: the database and KMS Secrets made
 * first, then the release; resolves once both Deployments are available. Images are the
 * chart's defaults: the test node runs them from this working tree.
 */
export async function installNightjar(
  t: Teardown,
  opts: { databaseUrl: string; values?: Record<string, unknown>; release?: string; wait?: boolean },
): Promise<Install> {
  const namespace = await testNamespace(t)
  const release = opts.release ?? 'nj'
  await kubectl(['-n', namespace, 'create', 'secret', 'generic', 'nightjar-database', `--from-literal=DATABASE_URL=${opts.databaseUrl}`])
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-install-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'kms.key'), randomBytes(32), { mode: 0o600 })
  await kubectl(['-n', namespace, 'create', 'secret', 'generic', 'nightjar-kms', `--from-file=kms.key=${join(dir, 'kms.key')}`])
  // CRDs are cluster-wide and owned by the first release that installed them (and kept after
  // it is gone): a second release installs without them, as a platform team's would
  const crdsPresent = (await kubectl(['get', 'crd', '-o', 'name'])).includes('browsersessions.nightjar.dev')
  const values = { ...opts.values, ...(crdsPresent ? { crds: { install: false } } : {}) }
  writeFileSync(join(dir, 'values.json'), JSON.stringify(values))
  await helm(['install', release, CHART, '--namespace', namespace, '-f', join(dir, 'values.json')])
  t.teardown(() => helm(['uninstall', release, '--namespace', namespace, '--wait=false']).catch(() => {}))
  const fullname = `${release}-nightjar`
  if (opts.wait !== false) await rolledOut(namespace, [`${fullname}-api-server`, `${fullname}-operator`])
  const svc = await kubectlJson(['-n', namespace, 'get', 'service', `${fullname}-api-server`])
  return { namespace, release, apiUrl: `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`, databaseUrl: opts.databaseUrl, fullname }
}

/** every Deployment available with all replicas updated and ready */
export async function rolledOut(namespace: string, deployments: string[], timeoutMs = 180_000): Promise<void> {
  try {
    await waitForRollout(namespace, deployments, timeoutMs)
  } catch (err) {
    // say why: each pod's phase, waiting reasons and the tail of its containers' logs
    const pods = (await kubectlJson(['-n', namespace, 'get', 'pods']).catch(() => ({ items: [] }))).items
    const info = cluster()
    const lines = pods.map((p: any) => {
      const states = [...(p.status.initContainerStatuses ?? []), ...(p.status.containerStatuses ?? [])]
        .map((c: any) => `${c.name}: ${JSON.stringify(c.state)} restarts=${c.restartCount}`).join('; ')
      const logs = readdirSync(info.node.logDir).filter((f) => f.startsWith(`${namespace}_${p.metadata.name}_`))
        .map((f) => `${f}: ${logExcerpt(readFileSync(join(info.node.logDir, f), 'utf8'))}`)
      return `${p.metadata.name} ${p.status.phase} ${states}\n  ${logs.join('\n  ')}`
    })
    // the test node's own complaints (a Service it could not serve, a bind that failed) say
    // more than any pod's log when every pod fails the same way
    const clusterLog = join(dirname(process.env.NIGHTJAR_TEST_CLUSTER ?? '.'), 'cluster.log')
    const nodeLines = existsSync(clusterLog) ? readFileSync(clusterLog, 'utf8').trim().split('\n').slice(-15) : []
    throw new Error(`${(err as Error).message}\n${lines.join('\n')}\ncluster log (last lines):\n  ${nodeLines.join('\n  ')}`)
  }
}

/** a container log in a line: its first error lines (a crash's message is at the top of its
 * stack, its tail is Node's version banner) and its last lines */
function logExcerpt(text: string): string {
  const all = text.trim().split('\n')
  const errors = all.filter((l) => /\b(error|Error|ERR_|EADDR|ECONN)/.test(l)).slice(0, 4)
  return [...errors, ...(errors.length ? ['…'] : []), ...all.slice(-5)].join(' | ')
}

async function waitForRollout(namespace: string, deployments: string[], timeoutMs: number): Promise<void> {
  await waitFor(async () => {
    for (const name of deployments) {
      const d = await kubectlJson(['-n', namespace, 'get', 'deployment', name]).catch(() => undefined)
      const want = d?.spec?.replicas ?? 1
      const st = d?.status ?? {}
      if ((st.readyReplicas ?? 0) < want || (st.updatedReplicas ?? 0) < want || (st.availableReplicas ?? 0) < want) return false
    }
    return true
  }, { what: `${deployments.join(', ')} ready`, timeoutMs, intervalMs: 500 })
}

/** the run's embedded Postgres URL for a fresh database (test/helpers/db.ts makes it) */
export { createTestDb } from '../helpers/db.ts'
