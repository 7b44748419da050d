// The test node's stand-in for kube-proxy and cluster DNS (not a test file): each ClusterIP
// as a /32 on the bridge with a round-robin TCP proxy per port, and Service names in every
// pod's /etc/hosts, rewritten in place (same inode) so the bind mounts keep seeing them.
// TCP only, no resolver. Details: docs/testing.md#the-cluster-tests-test-node
import { execFile } from 'node:child_process'
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { promisify } from 'node:util'
import type { ClusterNetwork } from '../../devcluster/network.ts'
import { Informer, type KubeClient, type Obj } from './kube-client.ts'

const run = promisify(execFile)

export interface HostsEntry {
  /** the pod's namespace: its Services resolve by short name too */
  namespace: string
  /** file bind-mounted over the pod's /etc/hosts */
  file: string
  /** `<ip>\t<names>` lines of the pod itself (hostname, hostAliases) */
  own: string[]
}

interface PortProxy {
  server: Server
  sockets: Set<Socket>
}

/** an address on the bridge the host answers for (ClusterIPs; fake browser pods' IPs) */
export async function addBridgeAddress(net: ClusterNetwork, ip: string): Promise<void> {
  await run('ip', ['addr', 'replace', `${ip}/32`, 'dev', net.bridge])
}

export async function removeBridgeAddress(net: ClusterNetwork, ip: string): Promise<void> {
  await run('ip', ['addr', 'del', `${ip}/32`, 'dev', net.bridge]).catch(() => {})
}

/** rewrite a file in place (same inode: bind mounts of it see the new text) */
export function rewriteInPlace(file: string, text: string): void {
  const fd = openSync(file, 'r+')
  try {
    const buf = Buffer.from(text)
    writeSync(fd, buf, 0, buf.length, 0)
    ftruncateSync(fd, buf.length)
  } finally {
    closeSync(fd)
  }
}

export class ServiceNetwork {
  private readonly services: Informer
  private readonly endpoints: Informer
  /** clusterIP → proxies by port */
  private readonly proxies = new Map<string, Map<number, PortProxy>>()
  /** per Service port: where the next connection goes */
  private readonly cursor = new Map<string, number>()
  private readonly hosts = new Map<string, HostsEntry>()
  private readonly written = new Map<string, string>()
  private hostsTimer?: NodeJS.Timeout
  /** serialises address/listener changes: events arrive faster than `ip` runs */
  private chain: Promise<void> = Promise.resolve()
  private stopped = false
  /** the last sync that failed, for whenServing's error */
  private lastError?: string

  private readonly net: ClusterNetwork
  private readonly log: (m: string) => void
  constructor(
    client: KubeClient,
    net: ClusterNetwork,
    log: (m: string) => void,
  ) {
    this.net = net
    this.log = log
    this.services = new Informer(client, '/api/v1/services', (type, svc) => {
      this.enqueue(type === 'DELETED' ? undefined : svc, svc)
      this.scheduleHosts()
    }, log)
    this.endpoints = new Informer(client, '/api/v1/endpoints', () => this.scheduleHosts(), log)
  }

  /** one Service's sync, after every change queued before it; a failed one is tried again
   * (a Service left without its listener — the API's own above all — breaks every pod at once) */
  private enqueue(svc: Obj | undefined, last: Obj, attempt = 1): void {
    this.chain = this.chain.then(() => this.syncService(svc, last)).catch((e) => {
      this.lastError = `service ${Informer.key(last)}: ${(e as Error).message}`
      this.log(`${this.lastError}${attempt < 10 ? ' (trying again)' : ''}`)
      if (attempt >= 10 || this.stopped) return
      setTimeout(() => {
        // the Service as it is now: it may have changed or gone meanwhile
        const now = this.services.store.get(Informer.key(last))
        this.enqueue(now, now ?? last, attempt + 1)
      }, 200 * attempt).unref()
    })
  }

  async start(): Promise<void> {
    this.services.start()
    this.endpoints.start()
    await Promise.all([this.services.ready, this.endpoints.ready])
    await this.chain
  }

  /** resolves once every TCP port of the Service has its listener (the apiserver creates
   * `default/kubernetes` itself, a moment after it starts); rejects after timeoutMs */
  async whenServing(namespace: string, name: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const svc = this.services.store.get(`${namespace}/${name}`)
      const ip = svc?.spec?.clusterIP
      const byPort = ip ? this.proxies.get(ip) : undefined
      const ports: number[] = (svc?.spec?.ports ?? []).filter((p: Obj) => (p.protocol ?? 'TCP') === 'TCP').map((p: Obj) => p.port)
      if (byPort && ports.length && ports.every((p) => byPort.has(p))) return
      if (Date.now() > deadline) {
        throw new Error(`the test node does not serve Service ${namespace}/${name}${ip ? ` (${ip})` : ''} after ${timeoutMs} ms${this.lastError ? `: ${this.lastError}` : ''}`)
      }
      // a poll, not a sleep: the informer and the sync chain move on their own
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  /** every Service in the cluster (for the Service environment variables) */
  allServices(): Obj[] {
    return [...this.services.store.values()]
  }

  /** the ClusterIP of a Service, when it has one */
  clusterIP(namespace: string, name: string): string | undefined {
    const ip = this.services.store.get(`${namespace}/${name}`)?.spec?.clusterIP
    return ip && ip !== 'None' ? ip : undefined
  }

  registerHosts(entry: HostsEntry): void {
    this.hosts.set(entry.file, entry)
    this.writeHosts(entry)
  }

  unregisterHosts(file: string): void {
    this.hosts.delete(file)
    this.written.delete(file)
  }

  private readyAddresses(namespace: string, name: string, portName: string | undefined): { ip: string; port: number }[] {
    const ep = this.endpoints.store.get(`${namespace}/${name}`)
    const out: { ip: string; port: number }[] = []
    for (const subset of ep?.subsets ?? []) {
      const port = (subset.ports ?? []).find((p: Obj) => (p.name ?? '') === (portName ?? ''))
        ?? (subset.ports?.length === 1 && !portName ? subset.ports[0] : undefined)
      if (!port) continue
      for (const a of subset.addresses ?? []) out.push({ ip: a.ip, port: port.port })
    }
    return out
  }

  private async syncService(svc: Obj | undefined, last: Obj): Promise<void> {
    if (this.stopped) return
    const ip: string | undefined = (svc ?? last).spec?.clusterIP
    if (!ip || ip === 'None') return
    const want = new Map<number, Obj>()
    if (svc) for (const p of svc.spec.ports ?? []) if ((p.protocol ?? 'TCP') === 'TCP') want.set(p.port, p)
    let byPort = this.proxies.get(ip)
    if (!byPort && want.size) {
      await addBridgeAddress(this.net, ip)
      byPort = new Map()
      this.proxies.set(ip, byPort)
    }
    if (!byPort) return
    for (const [port, proxy] of [...byPort]) {
      if (want.has(port)) continue
      byPort.delete(port)
      await this.closeProxy(proxy)
    }
    const { namespace, name } = (svc ?? last).metadata
    for (const [port, p] of want) {
      if (byPort.has(port)) continue
      const key = `${namespace}/${name}:${p.name ?? ''}`
      const proxy = await this.listen(ip, port, () => {
        // the current Service port's name: the Endpoints port it maps to
        const cur = this.services.store.get(`${namespace}/${name}`)?.spec?.ports?.find((x: Obj) => x.port === port)
        const targets = this.readyAddresses(namespace, name, cur?.name)
        if (!targets.length) return undefined
        const n = this.cursor.get(key) ?? 0
        this.cursor.set(key, n + 1)
        return targets[n % targets.length]
      })
      byPort.set(port, proxy)
    }
    if (!want.size) {
      this.proxies.delete(ip)
      await removeBridgeAddress(this.net, ip)
    }
  }

  private async listen(ip: string, port: number, pick: () => { ip: string; port: number } | undefined): Promise<PortProxy> {
    const sockets = new Set<Socket>()
    const track = (s: Socket) => { sockets.add(s); s.once('close', () => sockets.delete(s)) }
    const server = createServer({ allowHalfOpen: true }, (client) => {
      track(client)
      const target = pick()
      if (!target) { client.resetAndDestroy(); return }
      const upstream = connect({ host: target.ip, port: target.port, allowHalfOpen: true })
      track(upstream)
      // a refused or reset upstream resets the client, as a failed DNAT'd connection would
      upstream.on('error', () => { if (!client.destroyed) client.resetAndDestroy() })
      client.on('error', () => upstream.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
      upstream.on('close', () => client.destroy())
      client.on('close', () => upstream.destroy())
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, ip, () => { server.off('error', reject); resolve() })
    })
    return { server, sockets }
  }

  private async closeProxy(p: PortProxy): Promise<void> {
    for (const s of p.sockets) s.destroy()
    await new Promise<void>((r) => p.server.close(() => r()))
  }

  private scheduleHosts(): void {
    if (this.hostsTimer || this.stopped) return
    this.hostsTimer = setTimeout(() => {
      this.hostsTimer = undefined
      for (const e of this.hosts.values()) this.writeHosts(e)
    }, 20)
  }

  /** the cluster names every pod sees; the pod's namespace adds the short names */
  private serviceLines(namespace: string): string[] {
    const lines: string[] = []
    for (const svc of this.services.store.values()) {
      const { name, namespace: ns } = svc.metadata
      const names = [`${name}.${ns}.svc.cluster.local`, `${name}.${ns}.svc`, `${name}.${ns}`, ...(ns === namespace ? [name] : [])].join(' ')
      const ip = svc.spec?.clusterIP
      if (ip && ip !== 'None') lines.push(`${ip}\t${names}`)
      else if (ip === 'None') {
        for (const ep of this.endpoints.store.get(`${ns}/${name}`)?.subsets ?? []) {
          for (const a of ep.addresses ?? []) lines.push(`${a.ip}\t${names}`)
        }
      }
    }
    return lines.sort()
  }

  private writeHosts(e: HostsEntry): void {
    const text = [
      '# Kubernetes-managed hosts file (nightjar test node).',
      '127.0.0.1\tlocalhost',
      '::1\tlocalhost ip6-localhost ip6-loopback',
      ...e.own,
      '# Services',
      ...this.serviceLines(e.namespace),
      '',
    ].join('\n')
    if (this.written.get(e.file) === text) return
    try {
      rewriteInPlace(e.file, text)
      this.written.set(e.file, text)
    } catch (err) {
      this.log(`hosts ${e.file}: ${(err as Error).message}`)
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.services.stop()
    this.endpoints.stop()
    clearTimeout(this.hostsTimer)
    await this.chain.catch(() => {})
    for (const [ip, byPort] of this.proxies) {
      for (const p of byPort.values()) await this.closeProxy(p)
      await removeBridgeAddress(this.net, ip)
    }
    this.proxies.clear()
  }
}
