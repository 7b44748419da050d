// The supervisor (`npm run cluster` runs it detached as `serve`): starts every component in
// order, writes state.json once every node is Ready, answers node-stop and node-start on its
// control socket, and on SIGTERM stops everything last first. It restarts nothing by itself.
// Its stdout is supervisor.log, which `up` follows.
import { type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { startControlPlane } from './control-plane.ts'
import { startDns } from './dns.ts'
import { Fleet } from './fleet/fleet.ts'
import { importImages } from './images.ts'
import { startKubeProxy } from './kube-proxy.ts'
import { makeKubeletClientPki } from './kubelet.ts'
import { createClusterNetwork, podCidr } from './network.ts'
import { type DevNode, startNode } from './node.ts'
import { startPostgres } from './postgres.ts'
import { startLogged, type Supervision } from './processes.ts'
import { startScheduler } from './scheduler.ts'
import { CONTROL_SOCKET, PIDS_FILE, RUN_DIR, STATE_FILE, type State } from './state.ts'

/**
 * binDir: fetch-kube.mjs --node's binaries; gvisorShim: the built runsc shim, or '' for none;
 * nodeCount: 1..MAX_NODES; simulatedNodes: the simulated fleet's size (0: none)
 */
export async function supervise(binDir: string, gvisorShim: string, nodeCount = 1, simulatedNodes = 0): Promise<void> {
  const started = Date.now()
  const log = (m: string) => process.stdout.write(`+${((Date.now() - started) / 1000).toFixed(1)}s ${m}\n`)
  const { sv, abort } = supervision(log)

  try {
    const network = await createClusterNetwork()
    sv.onStop(() => network.remove())
    log(`bridge ${network.bridge}, host ${network.hostIp}, pods ${podCidr(network)}, Services ${network.serviceCidr}`)

    const kubeletPki = makeKubeletClientPki(join(RUN_DIR, 'pki'))
    const cp = await startControlPlane({
      binDir, network, log,
      apiArgs: [...kubeletPki.apiArgs, ...auditArgs(join(RUN_DIR, 'audit'))],
      // nodelifecycle lifts the kubelet's not-ready taint once the node is Ready (nothing
      // schedules before); endpointslice, because kube-proxy 1.20 reads EndpointSlices,
      // not Endpoints (without it every ClusterIP answers "connection refused"); podgc and
      // ttl as any cluster has them; daemonset for the chart's seccomp-profile installer
      controllers: ['nodelifecycle', 'endpointslice', 'podgc', 'ttl', 'daemonset'],
    })
    sv.onStop(() => cp.stop())
    // the kubeconfig `up` prints lives beside the rest of the cluster's state, with its CA
    const kubeconfig = join(RUN_DIR, 'admin.kubeconfig')
    writeFileSync(kubeconfig, readFileSync(cp.kubeconfig, 'utf8').replace(/certificate-authority: .*/, `certificate-authority: ${join(RUN_DIR, 'ca.crt')}`), { mode: 0o600 })
    writeFileSync(join(RUN_DIR, 'ca.crt'), cp.caPem)

    const databaseUrl = await startPostgres(sv, { dir: join(RUN_DIR, 'postgres'), network })
    const nodes: DevNode[] = []
    for (let index = 1; index <= nodeCount; index++) {
      nodes.push(await startNode(sv, { binDir, kubeconfig, network, gvisorShim, clientCaFile: kubeletPki.caFile, index, count: nodeCount }))
    }
    const images = await importImages(nodes.map((n) => n.info), binDir, log)
    startDns(sv, { dir: join(RUN_DIR, 'dns'), network, api: { url: cp.url, token: cp.adminToken, caPem: cp.caPem } })
    const stopScheduler = startScheduler(sv, { binDir, kubeconfig })
    for (const n of nodes) await n.startKubelet()
    await startKubeProxy(sv, { binDir, kubeconfig, network })
    // runs first on the way down, while the kubelets still run: every Pod goes through its
    // kubelet, so CNI releases its network
    sv.onStop(async () => {
      await stopScheduler()
      for (const n of nodes) await n.drain()
    })

    for (const n of nodes) {
      await n.ready()
      log(`node ${n.info.name} Ready (${n.info.ip}, pods ${n.info.podRange})`)
    }

    // the simulated fleet: its teardown runs before the real nodes' (last registered, first run)
    const fleet = new Fleet({ api: { url: cp.url, token: cp.adminToken, caPem: cp.caPem }, hostIp: network.hostIp, log })
    sv.onStop(() => fleet.stop())
    if (simulatedNodes) await fleet.resize(simulatedNodes)

    const writeState = () => {
      const state: State = {
        supervisorPid: process.pid, kubeconfig, databaseUrl, apiUrl: cp.url, bridge: network.bridge, hostIp: network.hostIp, podCidr: podCidr(network),
        serviceCidr: network.serviceCidr, containerdSocket: nodes[0].info.containerdSocket, images, nodes: nodes.map((n) => ({ ...n.info })),
        simulatedNodes: fleet.nodes.map(({ name, podCidr, stopped }) => ({ name, podCidr, stopped })), fleetCidr: fleet.cidr,
      }
      writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(state, null, 2), { mode: 0o600 })
      renameSync(`${STATE_FILE}.tmp`, STATE_FILE)
    }
    serveControl(sv, nodes, fleet, writeState)
    writeState()
    log('ready')
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? String(err)}`)
    await abort()
    process.exit(1)
  }
}

/**
 * The supervisor's own bookkeeping: every child's pid on disk, teardown steps run last first,
 * SIGTERM and SIGINT stop everything. abort() runs the teardown after a failed start.
 */
function supervision(log: (m: string) => void): { sv: Supervision; abort: () => Promise<void> } {
  const pids: number[] = []
  const remember = (c: ChildProcess) => {
    if (c.pid) pids.push(c.pid)
    writeFileSync(PIDS_FILE, pids.join('\n') + '\n')
  }
  const stops: (() => Promise<void>)[] = []
  let stopping = false
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => log(`teardown: ${String(err)}`))
  }
  const shutdown = () => {
    if (stopping) return
    stopping = true
    log('stopping')
    void stopAll().finally(() => {
      rmSync(STATE_FILE, { force: true })
      process.exit(0)
    })
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  const logs = join(RUN_DIR, 'logs')
  mkdirSync(logs, { recursive: true })
  const sv: Supervision = {
    logs,
    log,
    onStop: (step) => stops.push(step),
    launch(bin, args, name, env) {
      const child = startLogged(bin, args, join(logs, `${name}.log`), env)
      remember(child)
      child.once('exit', (code, sig) => { if (!stopping) log(`${name} exited (${code ?? sig}); see ${join(logs, `${name}.log`)}`) })
      return child
    },
  }
  return { sv, abort: async () => { stopping = true; await stopAll() } }
}

/**
 * POST /nodes/<name>/stop|start on CONTROL_SOCKET (`npm run cluster -- node-stop|node-start`),
 * for a real or a simulated node, and POST /fleet/<count> (`up --simulated-nodes N` on a
 * running cluster): one at a time; the answer comes once it is done (for start: the node
 * Ready again).
 */
function serveControl(sv: Supervision, nodes: DevNode[], fleet: Fleet, written: () => void): void {
  let queue = Promise.resolve()
  const server = createServer((req, res) => {
    const command = commandFor(req.method, req.url ?? '', nodes, fleet)
    if (!command) {
      res.writeHead(404).end(`no such node or command; nodes: ${[...nodes.map((n) => n.info.name), ...fleet.nodes.map((n) => n.name)].join(', ')}\n`)
      return
    }
    queue = queue.then(async () => {
      try {
        const said = await command()
        written()
        res.writeHead(200).end(`${said}\n`)
      } catch (err) {
        written()
        res.writeHead(500).end(`${String((err as Error).message ?? err)}\n`)
      }
    })
  })
  rmSync(CONTROL_SOCKET, { force: true })
  server.listen(CONTROL_SOCKET)
  sv.onStop(async () => {
    server.close()
    rmSync(CONTROL_SOCKET, { force: true })
  })
}

/** what a control request asks for, as a step that answers its outcome; undefined: no such node or command */
function commandFor(method: string | undefined, url: string, nodes: DevNode[], fleet: Fleet): (() => Promise<string>) | undefined {
  if (method !== 'POST') return undefined
  const size = /^\/fleet\/(\d+)$/.exec(url)
  if (size) return async () => {
    await fleet.resize(Number(size[1]))
    return `${fleet.nodes.length} simulated nodes`
  }
  const m = /^\/nodes\/([^/]+)\/(stop|start)$/.exec(url)
  if (!m) return undefined
  const [, name, verb] = m
  const node = nodes.find((n) => n.info.name === name)
  if (node) return async () => {
    await (verb === 'stop' ? node.stop() : node.start())
    return `${verb === 'stop' ? 'stopped' : 'started'} ${name}`
  }
  if (fleet.has(name)) return async () => {
    await (verb === 'stop' ? fleet.stopNode(name) : fleet.startNode(name))
    return `${verb === 'stop' ? 'stopped' : 'started'} ${name} (simulated)`
  }
  return undefined
}

/**
 * The kube-apiserver's audit log of what service accounts ask, and of every list (one JSON
 * line per request, at the Metadata level: user, verb, resource, never a body), so a bench
 * can say which component made each request (apiserver_request_total has no client label in
 * 1.20). Other requests of Kubernetes' own controllers and the nodes are not recorded.
 */
function auditArgs(dir: string): string[] {
  mkdirSync(dir, { recursive: true })
  const policy = join(dir, 'policy.yaml')
  writeFileSync(policy, [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: [RequestReceived]',
    'rules:',
    '  - level: None',
    '    namespaces: [kube-system]',
    '  - level: Metadata',
    '    userGroups: [system:serviceaccounts]',
    // every list, whoever asks: a list is what grows with the number of objects
    '  - level: Metadata',
    '    verbs: [list]',
    '  - level: None',
    '',
  ].join('\n'))
  // one file for a whole scale run (10,000 sessions write ~1 GB of it): the bench reads it from
  // an offset, which a rotation would reset
  return [`--audit-policy-file=${policy}`, `--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-maxsize=8000', '--audit-log-maxbackup=1', '--audit-log-format=json']
}
