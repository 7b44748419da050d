// The cluster's network on one machine: a Linux bridge whose host side holds the API
// server's address, each Pod in a network namespace joined to it. Addresses come from the
// benchmarking range 198.19.0.0/16, never a private or public range: cluster k (0..7) has
// pods 198.19.(32k).0/20 (host .1) and Services 198.19.(32k+16).0/20. The bridge is named
// njk-<pid>, so a run that died is swept by the next one.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { alive } from '../contracts/process.ts'

const run = promisify(execFile)
const ip = async (...args: string[]) => (await run('ip', args)).stdout

export interface ClusterNetwork {
  /** the Linux bridge the pods' veths attach to */
  bridge: string
  /** the host's address on the bridge: the API server and the node's proxies listen here */
  hostIp: string
  /** prefix length of the pod subnet (hostIp's subnet) */
  prefix: number
  /** Service ClusterIP range (--service-cluster-ip-range) */
  serviceCidr: string
}

/** the bridge a process with this pid makes */
export const bridgeName = (pid: number) => `njk-${pid}`

/** the pod subnet: the bridge's, as a CIDR */
export const podCidr = (net: ClusterNetwork) => `${net.hostIp.replace(/\.1$/, '.0')}/${net.prefix}`

/** node k's address on the bridge: the host's (.1) for the first, .k for the others (below every pod range) */
export const nodeIp = (net: ClusterNetwork, index: number) => net.hostIp.replace(/\.1$/, `.${index}`)

/**
 * The pod addresses node k of count hands out, all in the one bridge subnet (one L2 segment,
 * so no routes): a single node has .10 to the end of the /20, as always; with more, node k has
 * the k-th /23 of it (the first from .10), up to MAX_NODES.
 */
export function podRange(net: ClusterNetwork, index: number, count: number): { start: string; end?: string } {
  const [a, b, c] = net.hostIp.split('.').map(Number)
  if (count === 1) return { start: `${a}.${b}.${c}.10` }
  const base = c + 2 * (index - 1)
  return { start: `${a}.${b}.${base}.${index === 1 ? 10 : 1}`, end: `${a}.${b}.${base + 1}.254` }
}

/** the pod subnet's last usable address */
export function lastAddress(net: ClusterNetwork): string {
  const size = 2 ** (32 - net.prefix)
  const ip = net.hostIp.split('.').reduce((a, o) => a * 256 + Number(o), 0)
  const last = ip - (ip % size) + size - 2
  return [3, 2, 1, 0].map((k) => Math.floor(last / 256 ** k) % 256).join('.')
}

/** one more address on the bridge's host side (a further node's) */
export async function addBridgeAddress(net: ClusterNetwork & { bridge: string }, address: string): Promise<void> {
  await ip('addr', 'add', `${address}/${net.prefix}`, 'dev', net.bridge)
}

/** bridges (and pod namespaces) left by runs whose process died */
export async function sweepStaleNetworks(): Promise<void> {
  const links = await ip('-o', 'link', 'show', 'type', 'bridge').catch(() => '')
  for (const m of links.matchAll(/^\d+: (njk-(\d+))[:@]/gm)) {
    if (!alive(Number(m[2]))) await ip('link', 'del', m[1]).catch(() => { /* another run swept it first */ })
  }
  const nss = await ip('netns', 'list').catch(() => '')
  for (const m of nss.matchAll(/^(njp-(\d+)-\S+)/gm)) {
    if (!alive(Number(m[2]))) await ip('netns', 'del', m[1]).catch(() => { /* another run swept it first */ })
  }
}

export async function createClusterNetwork(): Promise<ClusterNetwork & { remove(): Promise<void> }> {
  await sweepStaleNetworks()
  const used = await ip('-4', '-o', 'addr', 'show').catch(() => '')
  let k = 0
  while (k < 8 && used.includes(` 198.19.${32 * k}.1/`)) k++
  if (k === 8) throw new Error('no free cluster subnet in 198.19.0.0/16 (eight clusters already up on this machine?)')
  const bridge = bridgeName(process.pid)
  const hostIp = `198.19.${32 * k}.1`
  await ip('link', 'add', bridge, 'type', 'bridge')
  await ip('addr', 'add', `${hostIp}/20`, 'dev', bridge)
  await ip('link', 'set', bridge, 'up')
  return {
    bridge,
    hostIp,
    prefix: 20,
    serviceCidr: `198.19.${32 * k + 16}.0/20`,
    async remove() {
      await ip('link', 'del', bridge).catch(() => { /* already gone: removing is idempotent */ })
    },
  }
}
