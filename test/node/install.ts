// What the node tests share to install the chart as the README says: a database of its own
// on the cluster's Postgres, the README's install block with only what a reader substitutes
// changed, helm's own homes, and a wait for Deployments to roll out.
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import pg from 'pg'
import { waitFor } from '../helpers/wait.ts'
import { KUBECTL, ROOT } from './real-cluster.ts'

/** helm with its cache, config and data under /tmp: the machine's own helm setup is left alone */
export const helmEnv = { ...process.env, HELM_CACHE_HOME: '/tmp/nightjar-helm/cache', HELM_CONFIG_HOME: '/tmp/nightjar-helm/config', HELM_DATA_HOME: '/tmp/nightjar-helm/data' }

/** a database of its own on the cluster's Postgres, so runs never meet each other's rows */
export async function freshDatabase(databaseUrl: string, t: { teardown(fn: () => unknown): void }): Promise<string> {
  const name = `nj_node_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: databaseUrl })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.end()
  })
  const u = new URL(databaseUrl)
  u.pathname = `/${name}`
  return u.toString()
}

/**
 * A README's install block: its lines, with only what a reader substitutes changed (the
 * registry, the database URL) and the test's values file added to the helm line.
 */
export function readmeInstall(readmePath: string, databaseUrl: string, valuesFile: string): string[] {
  const readme = readFileSync(readmePath, 'utf8')
  const section = readme.slice(readme.indexOf('## Install on Kubernetes'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block) throw new Error(`${readmePath} has no sh block under "Install on Kubernetes"`)
  const commands = block.replace(/\\\n\s*/g, '').split('\n').filter((l) => l.trim())
  return commands.map((c) => c
    .replace(/DATABASE_URL='[^']*'/, `DATABASE_URL='${databaseUrl}'`)
    .replace('images.registry=registry.example.com/nightjar', 'images.registry=localhost')
    .replace(/^helm install .*$/, (line) => `${line} -f ${valuesFile}`))
}

/** every Deployment has all its replicas updated, ready and available, and no old one left */
export async function rolledOut(kubeconfig: string, namespace: string, deployments: string[], timeoutMs = 300_000) {
  for (const d of deployments) {
    await waitFor(() => {
      const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', namespace, 'get', 'deployment', d, '-o', 'json'], { encoding: 'utf8' })
      if (r.status !== 0) return false
      const st = JSON.parse(r.stdout)
      const want = st.spec.replicas ?? 1
      return st.status.observedGeneration >= st.metadata.generation && (st.status.readyReplicas ?? 0) >= want
        && (st.status.availableReplicas ?? 0) >= want && (st.status.updatedReplicas ?? 0) >= want && (st.status.replicas ?? 0) === want
    }, { timeoutMs, intervalMs: 1000, what: `${d} rolled out` })
  }
}

const exec = promisify(execFile)

/**
 * A shell (helm and kubectl on PATH, the cluster's kubeconfig) and kubectl's JSON in one
 * namespace, both asynchronous: tests that time an agent's calls meanwhile must not block
 * the event loop, which would lengthen them.
 */
export function clusterShell(kubeconfig: string, namespace: string) {
  const env = { ...helmEnv, KUBECONFIG: kubeconfig, PATH: `${ROOT}.tools:${process.env.PATH}` }
  const sh = async (cmd: string, cwd = ROOT): Promise<{ status: number; stdout: string; stderr: string }> => {
    try {
      const r = await exec('bash', ['-c', cmd], { env, cwd, maxBuffer: 64 << 20, timeout: 600_000 })
      return { status: 0, stdout: r.stdout, stderr: r.stderr }
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string }
      return { status: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? String(e) }
    }
  }
  const kubectlJson = async (args: string[]): Promise<any> => {
    // 10,000 pods (the scale bench) are about 70 MiB of JSON
    const r = await exec(KUBECTL, ['--kubeconfig', kubeconfig, '-n', namespace, ...args, '-o', 'json'], { maxBuffer: 1 << 30 })
    return JSON.parse(r.stdout)
  }
  return { sh, kubectlJson }
}

export type ShellResult = { status: number; stdout: string; stderr: string }

/**
 * The README's install commands in order, the last (the bootstrap) once the release's
 * api-server and operator have rolled out; `check` judges each command's result (a test
 * asserts, a bench throws). Answers the bootstrap's output.
 */
export async function runReadmeInstall(commands: string[], opts: { sh(cmd: string): Promise<ShellResult>; kubeconfig: string; namespace: string; release: string; check(cmd: string, r: ShellResult): void }): Promise<string> {
  let bootstrapOut = ''
  for (const [i, cmd] of commands.entries()) {
    const last = i === commands.length - 1
    if (last) await rolledOut(opts.kubeconfig, opts.namespace, [`${opts.release}-api-server`, `${opts.release}-operator`])
    const r = await opts.sh(cmd)
    opts.check(cmd, r)
    if (last) bootstrapOut = r.stdout
  }
  return bootstrapOut
}

/** REST calls with an API key; a start waits until live (Prefer: wait=90) */
export function restWithKey(apiUrl: string, apiKey: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any; retryAfter?: number }> => {
    const r = await fetch(apiUrl + path, { method, headers: { authorization: `Bearer ${apiKey}`, prefer: 'wait=90', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const text = await r.text()
    const retryAfter = r.headers.get('retry-after')
    return { status: r.status, body: text ? JSON.parse(text) : undefined, ...(retryAfter ? { retryAfter: Number(retryAfter) } : {}) }
  }
}

/**
 * Deletes a namespace and waits until it is gone. A pod whose containers have exited but
 * whose sandbox the kubelet cannot tear down (here: "failed to remove netns … device or
 * resource busy") holds a namespace in Terminating for minutes; after the first wait, the
 * pods left are removed from the API (--force), as an operator would, so the next install
 * does not meet "namespace is being terminated".
 */
export function deleteNamespace(kubeconfig: string, namespace: string): void {
  const kubectl = (...args: string[]) => spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { stdio: 'ignore', timeout: 200_000 })
  if (kubectl('delete', 'namespace', namespace, '--ignore-not-found', '--timeout=120s').status === 0) return
  kubectl('-n', namespace, 'delete', 'pods', '--all', '--force', '--grace-period=0')
  kubectl('delete', 'namespace', namespace, '--ignore-not-found', '--timeout=120s')
}
