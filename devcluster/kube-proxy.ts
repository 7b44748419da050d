// kube-proxy 1.20.2 in iptables mode: Services' ClusterIPs to their endpoints (it reads
// EndpointSlices, hence the endpointslice controller in the control plane). Its stop runs
// `--cleanup`, which removes the KUBE-* rules it wrote.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { type ClusterNetwork, podCidr } from './network.ts'
import { freePort, stopProcess, type Supervision } from './processes.ts'
import { NODE_NAME } from './state.ts'

export async function startKubeProxy(sv: Supervision, opts: { binDir: string; kubeconfig: string; network: ClusterNetwork }): Promise<void> {
  const { binDir, network } = opts
  const args = [
    `--kubeconfig=${opts.kubeconfig}`, `--hostname-override=${NODE_NAME}`, `--cluster-cidr=${podCidr(network)}`, '--proxy-mode=iptables',
    `--bind-address=${network.hostIp}`, `--healthz-bind-address=127.0.0.1:${await freePort()}`, `--metrics-bind-address=127.0.0.1:${await freePort()}`,
    '--conntrack-max-per-core=0', '--oom-score-adj=0', '--logtostderr=true', '--v=1',
  ]
  const proxy = sv.launch(join(binDir, 'kube-proxy'), args, 'kube-proxy')
  sv.onStop(async () => {
    await stopProcess(proxy, 10_000)
    spawnSync(join(binDir, 'kube-proxy'), ['--cleanup'], { stdio: 'ignore' })
  })
}
