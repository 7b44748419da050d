// The cluster the cluster tests share (not a test file): the bridge, the real control plane
// and one test node, in a process of their own, until SIGTERM. scripts/cluster-process.mjs
// starts it for `npm test` and `npm run bench -- operator`; the tests read what it wrote
// to --info (test/cluster/helpers.ts).
//   node --import tsx test/cluster/main.ts --info FILE --bin DIR [--log FILE] [--fake-browsers]
import { mkdirSync, renameSync, writeFileSync, appendFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createClusterNetwork } from '../../devcluster/network.ts'
import { startControlPlane } from '../../devcluster/control-plane.ts'
import { startTestNode } from './test-node.ts'

export interface ClusterInfo {
  url: string
  caFile: string
  adminToken: string
  kubeconfig: string
  etcdUrl: string
  network: { bridge: string; hostIp: string; prefix: number; serviceCidr: string }
  node: { name: string; controlUrl: string; logDir: string }
  /** a control endpoint of this process: POST /restart-apiserver, POST /compact-etcd */
  controlUrl: string
  fakeBrowsers: boolean
}

const { values } = parseArgs({
  options: { info: { type: 'string' }, bin: { type: 'string' }, log: { type: 'string' }, 'fake-browsers': { type: 'boolean' } },
})
if (!values.info || !values.bin) {
  process.stderr.write('usage: main.ts --info FILE --bin DIR [--log FILE] [--fake-browsers]\n')
  process.exit(2)
}
const root = fileURLToPath(new URL('../../', import.meta.url))
const started = Date.now()
const log = (m: string) => {
  const line = `cluster +${((Date.now() - started) / 1000).toFixed(1)}s ${m}`
  process.stdout.write(line + '\n')
  if (values.log) appendFileSync(values.log, line + '\n')
}

const network = await createClusterNetwork()
const stops: (() => Promise<void>)[] = [() => network.remove()]
const stopAll = async () => {
  for (const stop of stops.reverse()) await stop().catch((err) => log(`teardown: ${String(err)}`))
}
let stopping = false
const shutdown = () => {
  if (stopping) return
  stopping = true
  log('stopping')
  void stopAll().finally(() => process.exit(0))
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)

try {
  const cp = await startControlPlane({ binDir: values.bin, network, log })
  stops.push(() => cp.stop())
  const logDir = join(cp.dir, 'pods')
  mkdirSync(logDir, { recursive: true })
  const node = await startTestNode({
    api: { url: cp.url, caPem: cp.caPem, token: cp.adminToken },
    network,
    repoRoot: root,
    logDir,
    fakeBrowsers: !!values['fake-browsers'],
    log,
  })
  stops.push(() => node.stop())

  // fault hooks for the tests: restart kube-apiserver, compact etcd
  const { createServer } = await import('node:http')
  const control = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.method !== 'POST') return reply(405, { error: 'POST only' })
    const run = async () => {
      if (req.url === '/restart-apiserver') return { ok: true, restarted: await cp.restartApiserver().then(() => true) }
      if (req.url === '/compact-etcd') return { ok: true, revision: await cp.compactEtcd() }
      return undefined
    }
    run().then(
      (body) => (body ? reply(200, body) : reply(404, { error: 'no such hook' })),
      (err) => reply(500, { error: String(err) }),
    )
  })
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()))
  stops.push(() => new Promise<void>((r) => control.close(() => r())))

  const info: ClusterInfo = {
    url: cp.url,
    caFile: cp.caFile,
    adminToken: cp.adminToken,
    kubeconfig: cp.kubeconfig,
    etcdUrl: cp.etcdUrl,
    network: { bridge: network.bridge, hostIp: network.hostIp, prefix: network.prefix, serviceCidr: network.serviceCidr },
    node: { name: node.nodeName, controlUrl: node.controlUrl, logDir },
    controlUrl: `http://127.0.0.1:${(control.address() as { port: number }).port}`,
    fakeBrowsers: !!values['fake-browsers'],
  }
  // atomically: the runner waits for the file to exist and reads it whole
  mkdirSync(dirname(values.info), { recursive: true })
  writeFileSync(`${values.info}.tmp`, JSON.stringify(info, null, 2), { mode: 0o600 })
  renameSync(`${values.info}.tmp`, values.info)
  log(`ready: kube-apiserver ${cp.url}, node ${node.nodeName}`)
} catch (err) {
  log(`failed: ${(err as Error).stack ?? String(err)}`)
  await stopAll()
  process.exit(1)
}
