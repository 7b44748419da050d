// The supervisor (`npm run cluster` runs it detached as `serve`): starts every component in
// order, writes state.json once the node is Ready, and on SIGTERM stops them last first.
// Its stdout is supervisor.log, which `up` follows.
import { type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startContainerd } from './containerd.ts'
import { startControlPlane } from './control-plane.ts'
import { startDns } from './dns.ts'
import { importImages } from './images.ts'
import { startKubeProxy } from './kube-proxy.ts'
import { drainPods, makeKubeletClientPki, nodeReady, startKubelet } from './kubelet.ts'
import { createClusterNetwork, podCidr } from './network.ts'
import { startPostgres } from './postgres.ts'
import { startLogged, type Supervision } from './processes.ts'
import { startScheduler } from './scheduler.ts'
import { NODE_NAME, PIDS_FILE, RUN_DIR, STATE_FILE, type State } from './state.ts'

/** binDir: fetch-kube.mjs --node's binaries; gvisorShim: the built runsc shim, or '' for none */
export async function supervise(binDir: string, gvisorShim: string): Promise<void> {
  const started = Date.now()
  const log = (m: string) => process.stdout.write(`+${((Date.now() - started) / 1000).toFixed(1)}s ${m}\n`)
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

  try {
    const network = await createClusterNetwork()
    sv.onStop(() => network.remove())
    log(`bridge ${network.bridge}, host ${network.hostIp}, pods ${podCidr(network)}, Services ${network.serviceCidr}`)

    const kubeletPki = makeKubeletClientPki(join(RUN_DIR, 'pki'))
    const cp = await startControlPlane({
      binDir, network, log,
      apiArgs: kubeletPki.apiArgs,
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
    const socket = await startContainerd(sv, { dir: join(RUN_DIR, 'containerd'), network, gvisorShim })
    const images = await importImages(socket, binDir, log)
    startDns(sv, { dir: join(RUN_DIR, 'dns'), network, api: { url: cp.url, token: cp.adminToken, caPem: cp.caPem } })
    const stopScheduler = startScheduler(sv, { binDir, kubeconfig })
    const kubelet = await startKubelet(sv, { binDir, kubeconfig, network, socket, clientCaFile: kubeletPki.caFile })
    await startKubeProxy(sv, { binDir, kubeconfig, network })
    // runs first on the way down, while the kubelet still runs: every Pod goes through it,
    // so CNI releases its network
    sv.onStop(async () => {
      await stopScheduler()
      await drainPods(kubeconfig, socket, log)
    })

    await nodeReady(kubeconfig, kubelet, logs)
    log(`node ${NODE_NAME} Ready`)

    const state: State = {
      supervisorPid: process.pid, kubeconfig, databaseUrl, apiUrl: cp.url, bridge: network.bridge, hostIp: network.hostIp, podCidr: podCidr(network),
      serviceCidr: network.serviceCidr, containerdSocket: socket, images,
    }
    writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(state, null, 2), { mode: 0o600 })
    renameSync(`${STATE_FILE}.tmp`, STATE_FILE)
    log('ready')
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? String(err)}`)
    stopping = true
    await stopAll()
    process.exit(1)
  }
}
