// The product's images on a real node (`npm run cluster -- up`: a real kubelet on
// containerd + runc, kube-proxy, the DNS stand-in, a Postgres on the bridge). Not part of
// `npm test` yet: run it on demand, as root, with
//   node scripts/test.mjs test/node/real-node.test.ts
// It brings the cluster up itself (a no-op when it is up) and leaves it up; `npm run
// cluster -- down` removes it. Pods run in a namespace of their own, deleted at the end.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { waitFor } from '../helpers/wait.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const KUBECTL = `${ROOT}.tools/kubectl`

/** `npm run cluster -- up` (its last lines: export KUBECONFIG=…, export DATABASE_URL=…) */
function clusterUp(): { kubeconfig: string; databaseUrl: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', `${ROOT}scripts/cluster.ts`, 'up'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 60 * 60_000 })
  if (r.status !== 0) throw new Error(`npm run cluster -- up failed (exit ${r.status})`)
  const kubeconfig = /^export KUBECONFIG=(.+)$/m.exec(r.stdout)?.[1]
  const databaseUrl = /^export DATABASE_URL='(.+)'$/m.exec(r.stdout)?.[1]
  if (!kubeconfig || !databaseUrl) throw new Error('`up` did not print KUBECONFIG and DATABASE_URL last')
  return { kubeconfig, databaseUrl }
}

// the first `up` on a machine builds kubelet, kube-proxy, kube-scheduler and the images
t.setTimeout(60 * 60_000)
const { kubeconfig, databaseUrl } = clusterUp()
const ns = `node-test-${randomBytes(3).toString('hex')}`
const helmEnv = { ...process.env, HELM_CACHE_HOME: '/tmp/nightjar-helm/cache', HELM_CONFIG_HOME: '/tmp/nightjar-helm/config', HELM_DATA_HOME: '/tmp/nightjar-helm/data' }

function kubectl(args: string[], input?: string): string {
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input, timeout: 120_000 })
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${(r.stderr || r.stdout).trim()}`)
  return r.stdout
}

/** a Pod as the operator makes browser pods: restricted, read-only root, uid 10001 */
function restrictedPod(name: string, image: string, command: string[], labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels },
    spec: {
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{
        name: 'main', image, imagePullPolicy: 'Never', command,
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
      }],
    },
  }
}

const podReady = (name: string) => () => kubectl(['-n', ns, 'get', 'pod', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).trim() === 'True'

kubectl(['create', 'namespace', ns])
t.teardown(() => {
  spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false'], { stdio: 'ignore' })
})

t.test('the node is Ready and holds the three images, with their sizes as the kubelet reports them', async (t) => {
  const node = JSON.parse(kubectl(['get', 'node', 'nightjar-node', '-o', 'json']))
  const ready = node.status.conditions.find((c: { type: string }) => c.type === 'Ready')
  t.equal(ready?.status, 'True', 'node Ready')
  const images = node.status.images as { names: string[]; sizeBytes: number }[]
  for (const name of ['api-server', 'operator', 'browser-pod']) {
    const img = images.find((i) => i.names.some((n) => n.includes(`/nightjar-${name}:`)))
    t.ok(img, `nightjar-${name} is in containerd's store`)
    if (img) t.comment(`nightjar-${name}: ${Math.round(img.sizeBytes / 1e6)} MB`)
  }
})

t.test('a restricted container runs as uid 10001 with seccomp, no capabilities and a read-only root, read from inside it', async (t) => {
  const pod = restrictedPod('restricted', 'localhost/nightjar-operator:0.1.0', ['sleep', '3600'])
  kubectl(['apply', '-f', '-'], JSON.stringify(pod))
  await waitFor(podReady('restricted'), { timeoutMs: 120_000, intervalMs: 500, what: 'the restricted pod Ready' })
  const status = kubectl(['-n', ns, 'exec', 'restricted', '--', 'cat', '/proc/self/status'])
  t.match(status, /^Uid:\s+10001\s/m, 'non-root uid')
  t.match(status, /^Seccomp:\s+2$/m, 'seccomp filtering')
  t.match(status, /^CapEff:\s+0+$/m, 'no effective capabilities')
  const write = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', 'restricted', '--', 'touch', '/app/x'], { encoding: 'utf8' })
  t.not(write.status, 0, 'a write to the root filesystem fails')
  t.match(write.stderr, /Read-only file system/, 'because it is read-only')
  const logs = kubectl(['-n', ns, 'logs', 'restricted'])
  t.equal(logs, '', 'kubectl logs answers through the kubelet')
})

t.test('a Service name resolves through the DNS stand-in and its ClusterIP reaches the Pod through kube-proxy', async (t) => {
  const server = restrictedPod('echo', 'localhost/nightjar-operator:0.1.0', ['node', '-e', "require('http').createServer((q,s)=>s.end('echo from '+require('os').hostname())).listen(8080)"], { app: 'echo' })
  kubectl(['apply', '-f', '-'], JSON.stringify(server))
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: ns }, spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 8080 }] } }))
  await waitFor(podReady('echo'), { timeoutMs: 120_000, intervalMs: 500, what: 'the echo pod Ready' })
  await waitFor(podReady('restricted'), { timeoutMs: 120_000, intervalMs: 500, what: 'the client pod Ready' })
  const url = `http://echo.${ns}.svc.cluster.local/`
  const body = await waitFor(() => {
    const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', 'restricted', '--', 'node', '-e', `fetch('${url}').then(r=>r.text()).then(t=>process.stdout.write(t))`], { encoding: 'utf8' })
    return r.status === 0 ? r.stdout : undefined
  }, { timeoutMs: 30_000, intervalMs: 500, what: 'the Service answering by name' })
  t.equal(body, 'echo from echo', 'the answer came from the echo Pod')
})

t.test('a Pod reaches the cluster\'s Postgres with the DATABASE_URL `up` printed', async (t) => {
  const script = `const {Client}=require('/app/node_modules/pg');const c=new Client({connectionString:process.env.DATABASE_URL});c.connect().then(()=>c.query('select 41+1 as n')).then(r=>{process.stdout.write(String(r.rows[0].n));return c.end()}).catch(e=>{process.stderr.write(e.message);process.exit(1)})`
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', 'restricted', '--', 'env', `DATABASE_URL=${databaseUrl}`, 'node', '-e', script], { encoding: 'utf8' })
  t.equal(r.status, 0, 'the query ran')
  t.equal(r.stdout, '42', 'and answered')
})

t.test('the chart installs with the real images: every Deployment Ready through the kubelet\'s probes, the api-server answering through its Service', async (t) => {
  const release = 'nj'
  const chartNs = `${ns}-chart`
  kubectl(['create', 'namespace', chartNs])
  t.teardown(() => {
    spawnSync(`${ROOT}.tools/helm`, ['--kubeconfig', kubeconfig, 'uninstall', release, '-n', chartNs, '--wait=false'], { stdio: 'ignore', env: helmEnv })
    spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'delete', 'namespace', chartNs, '--wait=false'], { stdio: 'ignore' })
  })
  kubectl(['-n', chartNs, 'create', 'secret', 'generic', 'nightjar-database', `--from-literal=DATABASE_URL=${databaseUrl}`])
  kubectl(['-n', chartNs, 'create', 'secret', 'generic', 'nightjar-kms', `--from-literal=kms.key=${randomBytes(32).toString('base64')}`])
  const crdsPresent = kubectl(['get', 'crd', '-o', 'name']).includes('browsersessions.nightjar.dev')
  const helm = spawnSync(`${ROOT}.tools/helm`, [
    '--kubeconfig', kubeconfig, 'install', release, `${ROOT}charts/nightjar`, '-n', chartNs,
    '--set', 'images.registry=localhost', '--set', 'apiServer.baseUrl=http://nightjar.test',
    ...(crdsPresent ? ['--set', 'crds.install=false'] : []),
  ], { encoding: 'utf8', env: helmEnv, timeout: 300_000 })
  t.equal(helm.status, 0, 'helm install succeeded')
  const fullname = `${release}-nightjar`
  for (const d of [`${fullname}-api-server`, `${fullname}-operator`]) {
    await waitFor(() => {
      const st = JSON.parse(kubectl(['-n', chartNs, 'get', 'deployment', d, '-o', 'json']))
      return (st.status.readyReplicas ?? 0) >= st.spec.replicas && (st.status.availableReplicas ?? 0) >= st.spec.replicas
    }, { timeoutMs: 300_000, intervalMs: 1000, what: `${d} Ready` })
    t.pass(`${d}: every replica Ready`)
  }
  const svc = JSON.parse(kubectl(['-n', chartNs, 'get', 'service', `${fullname}-api-server`, '-o', 'json']))
  const r = await fetch(`http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}/readyz`)
  t.equal(r.status, 200, 'the api-server answers /readyz at its ClusterIP, through kube-proxy')
})
