// The cluster's DNS stand-in: Debian has no CoreDNS, so dnsmasq on the bridge answers
// <service>.<namespace>.svc.cluster.local from a hosts file kept equal to the API's ClusterIP
// Services (no headless or pod records, no SRV), and nothing else: it forwards no name out
// of the cluster. The kubelet hands the bridge address to Pods as their nameserver.
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeApi, type ApiAccess } from './fleet/kube-api.ts'
import type { ClusterNetwork } from './network.ts'
import { stopProcess, type Supervision } from './processes.ts'

export function startDns(sv: Supervision, opts: { dir: string; network: ClusterNetwork; api: ApiAccess }): void {
  const { dir, network } = opts
  mkdirSync(dir, { recursive: true })
  const hostsFile = join(dir, 'hosts')
  writeFileSync(hostsFile, '')
  chmodSync(dir, 0o755)
  const dnsmasq = sv.launch('dnsmasq', [
    '--keep-in-foreground', '--log-facility=-', '--conf-file=/dev/null', '--no-hosts', '--no-resolv',
    `--addn-hosts=${hostsFile}`, '--local=/cluster.local/', '--bind-interfaces', `--listen-address=${network.hostIp}`,
    '--except-interface=lo', `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--user=root',
  ], 'dnsmasq')
  sv.onStop(() => stopProcess(dnsmasq, 10_000))
  const feeder = feedDns(opts.api, hostsFile, () => dnsmasq.kill('SIGHUP'), sv.log)
  sv.onStop(async () => feeder.stop())
}

/** keeps dnsmasq's hosts file equal to the API's ClusterIP Services (polled each second) */
function feedDns(api: ApiAccess, hostsFile: string, reload: () => void, log: (m: string) => void) {
  let last = ''
  let stopped = false
  const client = new KubeApi(api)
  const tick = async () => {
    const list = await client.must('GET', '/api/v1/services')
    const items = (list.items ?? []) as { metadata: { name: string; namespace: string }; spec: { clusterIP?: string } }[]
    const lines = items
      .filter((s) => s.spec.clusterIP && s.spec.clusterIP !== 'None')
      .map((s) => `${s.spec.clusterIP} ${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local ${s.metadata.name}.${s.metadata.namespace}.svc`)
      .sort()
    const text = `# written by devcluster/dns.ts from the API's Services: a stand-in for CoreDNS\n${lines.join('\n')}\n`
    if (text !== last) {
      writeFileSync(`${hostsFile}.tmp`, text)
      renameSync(`${hostsFile}.tmp`, hostsFile)
      last = text
      reload()
    }
  }
  const loop = async () => {
    while (!stopped) {
      await tick().catch((err) => log(`dns feeder: ${String(err)}`))
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
  void loop()
  return { stop: () => { stopped = true; client.close() } }
}
