// What the node tests share to install the chart as the README says: a database of its own
// on the cluster's Postgres, the README's install block with only what a reader substitutes
// changed, helm's own homes, and a wait for Deployments to roll out.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { waitFor } from '../helpers/wait.ts'
import { KUBECTL } from './real-cluster.ts'

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
