// Several real nodes on this machine (`npm run cluster -- up --nodes 2`): both Ready, a Pod
// on each reaches the other's by its address and through a Service, and `node-stop` takes
// the second down as a failed machine would (NotReady, its Lease still, its Pods silent)
// until `node-start` brings it back. Node phase; alone, as root:
// node scripts/test.mjs test/node/nodes.test.ts — it leaves the cluster up (`down` removes it).
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { PRODUCT_VERSION as TAG } from '../../contracts/version.ts'
import { waitFor } from '../helpers/wait.ts'
import { clusterCommand, clusterUp, KUBECTL, kubectlOn } from './real-cluster.ts'

t.setTimeout(60 * 60_000)
const { kubeconfig, nodes } = clusterUp(2)
const [first, second] = nodes
const kubectl = kubectlOn(kubeconfig)
const ns = `nodes-test-${randomBytes(3).toString('hex')}`
const SERVER = "require('http').createServer((q,s)=>s.end(process.env.ME+' on '+process.env.NODE)).listen(8080)"

/** a Pod answering "<name> on <its node>" on 8080, on the node given (by nodeName, or by the scheduler through a nodeSelector) */
function echoPod(name: string, node: string, how: 'nodeName' | 'nodeSelector') {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      ...(how === 'nodeName' ? { nodeName: node } : { nodeSelector: { 'kubernetes.io/hostname': node } }),
      automountServiceAccountToken: false, terminationGracePeriodSeconds: 1,
      containers: [{
        name: 'main', image: `localhost/nightjar-operator:${TAG}`, imagePullPolicy: 'Never', command: ['node', '-e', SERVER],
        env: [{ name: 'ME', value: name }, { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
        resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
      }],
    },
  }
}

const pod = (name: string) => JSON.parse(kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json']))
const podReady = (name: string) => () => pod(name).status.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True')
const nodeReady = (name: string) => JSON.parse(kubectl(['get', 'node', name, '-o', 'json'])).status.conditions.find((c: { type: string }) => c.type === 'Ready')?.status === 'True'
const leaseRenewed = (name: string): string => JSON.parse(kubectl(['-n', 'kube-node-lease', 'get', 'lease', name, '-o', 'json'])).spec.renewTime

/** what `from` gets for url within 3 s: its answer, or undefined when none came */
function fetchFrom(from: string, url: string): string | undefined {
  const script = `fetch('${url}',{signal:AbortSignal.timeout(3000)}).then(r=>r.text()).then(t=>process.stdout.write(t),()=>process.exit(3))`
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', from, '--', 'node', '-e', script], { encoding: 'utf8', timeout: 30_000 })
  return r.status === 0 ? r.stdout : undefined
}

let secondStopped = false
kubectl(['create', 'namespace', ns])
t.teardown(async () => {
  // a run that failed with the node down leaves it up again for the tests after it; a
  // node-start that fails here too is left to `down`, which sweeps a stopped node
  if (secondStopped) await clusterCommand('node-start', second).catch(() => {})
  spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false'], { stdio: 'ignore' })
})

t.test('[ISSUE-37] up --nodes 2: two real kubelets registered, both Ready, each at its own address', async (t) => {
  t.same(nodes, ['nightjar-node', 'nightjar-node-2'], 'the first node keeps the single node\'s name')
  const items = JSON.parse(kubectl(['get', 'nodes', '-o', 'json'])).items as any[]
  t.same(items.map((n) => n.metadata.name).sort(), nodes, 'the API holds both Nodes')
  for (const n of items) t.ok(nodeReady(n.metadata.name), `${n.metadata.name} Ready`)
  const ips = items.map((n) => n.status.addresses.find((a: { type: string }) => a.type === 'InternalIP')?.address)
  t.equal(new Set(ips).size, 2, `each kubelet at an address of its own (${ips.join(', ')})`)
})

t.test('[ISSUE-37] a Pod on each node reaches the other\'s Pod by its address and through a Service backed by the other', async (t) => {
  for (const [name, node] of [['one', first], ['two', second]]) {
    kubectl(['apply', '-f', '-'], JSON.stringify(echoPod(name, node, 'nodeName')))
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] } }))
  }
  for (const name of ['one', 'two']) await waitFor(podReady(name), { timeoutMs: 120_000, intervalMs: 500, what: `pod ${name} Ready` })
  const [one, two] = [pod('one'), pod('two')]
  t.not(one.status.podIP, two.status.podIP, `two pod addresses (${one.status.podIP}, ${two.status.podIP})`)
  t.equal(fetchFrom('one', `http://${two.status.podIP}:8080/`), `two on ${second}`, 'node 1\'s Pod reaches node 2\'s by its address')
  t.equal(fetchFrom('two', `http://${one.status.podIP}:8080/`), `one on ${first}`, 'and node 2\'s reaches node 1\'s')
  const viaService = (from: string, svc: string) => waitFor(() => fetchFrom(from, `http://${svc}.${ns}.svc.cluster.local/`), { timeoutMs: 30_000, intervalMs: 500, what: `${svc}'s Service from ${from}` })
  t.equal(await viaService('one', 'two'), `two on ${second}`, 'a Service backed by node 2\'s Pod answers node 1\'s (DNS stand-in, kube-proxy)')
  t.equal(await viaService('two', 'one'), `one on ${first}`, 'and one backed by node 1\'s answers node 2\'s')
})

t.test('[ISSUE-37] node-stop: the node turns NotReady, its Lease stops and its Pods fall silent; node-start: Ready again, new Pods run there', async (t) => {
  const twoIp = pod('two').status.podIP
  const stoppedAt = Date.now()
  secondStopped = true
  t.match(await clusterCommand('node-stop', second), new RegExp(`stopped ${second}`), 'node-stop answers once done')
  const leaseAtStop = leaseRenewed(second)
  t.equal(fetchFrom('one', `http://${twoIp}:8080/`), undefined, 'its Pod answers nothing (frozen, as on a machine gone)')
  await waitFor(() => !nodeReady(second), { timeoutMs: 120_000, intervalMs: 1000, what: `${second} NotReady` })
  t.pass(`${second} NotReady ${Math.round((Date.now() - stoppedAt) / 1000)} s after node-stop`)
  t.equal(leaseRenewed(second), leaseAtStop, 'its Lease was not renewed since')
  t.ok(nodeReady(first), `${first} stays Ready`)
  t.equal(fetchFrom('one', `http://${twoIp}:8080/`), undefined, 'its Pod still answers nothing')

  const startedAt = Date.now()
  t.match(await clusterCommand('node-start', second), new RegExp(`started ${second}`), 'node-start answers once the node is Ready')
  secondStopped = false
  t.pass(`${second} Ready ${Math.round((Date.now() - startedAt) / 1000)} s after node-start`)
  t.ok(nodeReady(second), `${second} Ready`)
  t.not(leaseRenewed(second), leaseAtStop, 'its Lease renewed again')
  await waitFor(() => fetchFrom('one', `http://${twoIp}:8080/`), { timeoutMs: 60_000, intervalMs: 500, what: 'the thawed Pod answering' })
  t.pass('the Pod it had answers again')
  kubectl(['apply', '-f', '-'], JSON.stringify(echoPod('three', second, 'nodeSelector')))
  await waitFor(podReady('three'), { timeoutMs: 120_000, intervalMs: 500, what: 'a new pod on the node Ready' })
  t.equal(pod('three').spec.nodeName, second, 'the scheduler placed a new Pod there')
  t.equal(fetchFrom('one', `http://${pod('three').status.podIP}:8080/`), `three on ${second}`, 'and it answers')
})
