// Local reach: networks as rows and Network resources, the daemon registry fed
// by the tunnel broker, and the lookups session_start and the broker need.
import type { Db } from '../store/db.ts'
import { tx } from '../store/db.ts'
import type { TunnelBroker } from '../control/broker.ts'
import type { SessionPlane } from '../sessions/plane.ts'
import type { Network } from '../../crds/types.ts'
import { LABELS } from '../../crds/types.ts'
import { recordAudit } from '../audit/audit.ts'
import { badRequest } from '../../contracts/errors.ts'
import { parseHostPattern, formatHostPattern } from '../../contracts/hosts.ts'
import type { DaemonCountsHub } from './counts.ts'
import * as store from './store.ts'

export interface NetworkView {
  id: string
  name: string
  daemonCount: number
  onlineDaemonCount: number
  declaredHosts: string[]
}

export class LocalReach {
  broker?: TunnelBroker

  constructor(private readonly deps: { db: Db; plane?: SessionPlane; hub?: DaemonCountsHub }) {}

  async counts(networkId: string) {
    const rows = await store.daemonRows(this.deps.db, networkId)
    const online = this.broker ? this.broker.listDaemons(networkId).filter((d) => d.reachable).length : 0
    return { daemonCount: rows.length, onlineDaemonCount: online }
  }

  async view(n: store.NetworkRow): Promise<NetworkView> {
    return { id: n.id, name: n.name, ...(await this.counts(n.id)), declaredHosts: n.declaredHosts }
  }

  async create(orgId: string, actor: string, name: string) {
    const { network, token } = await tx(this.deps.db, async (c) => store.insertNetwork(c, orgId, store.validateNetworkName(name)))
    await this.deps.plane?.networks.create({
      metadata: { name: network.id, labels: { [LABELS.org]: orgId } },
      spec: { orgId, name: network.name, declaredHosts: [] },
    } as unknown as Network).catch(() => {})
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.create', targetType: 'network', targetId: network.id })
    return { network: { id: network.id, name: network.name, daemonCount: 0, onlineDaemonCount: 0 }, token }
  }

  async list(orgId: string) {
    return Promise.all((await store.listNetworks(this.deps.db, orgId)).map((n) => this.view(n)))
  }

  async get(orgId: string, id: string) {
    return this.view(await store.getNetwork(this.deps.db, orgId, id))
  }

  async setDeclaredHosts(orgId: string, actor: string, id: string, hosts: string[]) {
    const n = await store.setDeclaredHosts(this.deps.db, orgId, id, store.validateDeclaredHosts(hosts))
    await this.deps.plane?.networks.patch(n.id, { spec: { declaredHosts: n.declaredHosts } }).catch(() => {})
    // live sessions keep their launch-time list; daemons re-check against the new one
    this.broker?.pushDeclaredHosts(n.id, n.declaredHosts)
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.update', targetType: 'network', targetId: n.id })
    return this.view(n)
  }

  async rotateToken(orgId: string, actor: string, id: string) {
    const n = await store.getNetwork(this.deps.db, orgId, id)
    const token = await tx(this.deps.db, async (c) => {
      await store.revokeTokens(c, n.id)
      return store.insertToken(c, n.id)
    })
    // daemons joined with the old token must rejoin, and fail with 401
    this.broker?.disconnectNetwork(n.id, 'join token rotated')
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.rotate_token', targetType: 'network', targetId: n.id })
    return { network: await this.view(n), token }
  }

  async delete(orgId: string, actor: string, id: string) {
    const n = await store.deleteNetworkRow(this.deps.db, orgId, id)
    this.broker?.disconnectNetwork(n.id, 'network deleted')
    await this.deps.plane?.networks.delete(n.id).catch(() => {})
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.delete', targetType: 'network', targetId: n.id })
  }

  async daemons(orgId: string, id: string) {
    const n = await store.getNetwork(this.deps.db, orgId, id)
    const live = new Map((this.broker?.listDaemons(n.id) ?? []).map((d) => [d.id, d]))
    return (await store.daemonRows(this.deps.db, n.id)).map((d) => ({
      id: d.id, host: d.host, version: d.version, connectedSince: live.get(d.id)?.connectedSince ?? d.connectedSince, reachable: live.get(d.id)?.reachable ?? false,
    }))
  }

  /**
   * local_reach_ensure: the backing network for a target, created when missing, with
   * the target declared. A new network's join token is returned once.
   */
  async ensure(orgId: string, actor: string, target: string, networkName = 'local') {
    const host = targetHost(target)
    let n = await store.resolveNetwork(this.deps.db, orgId, networkName)
    let token: { tokenId: string; secret: string } | undefined
    if (!n) {
      const created = await this.create(orgId, actor, networkName)
      token = created.token
      n = await store.getNetwork(this.deps.db, orgId, created.network.id)
    }
    let declared = n.declaredHosts
    if (!declared.includes(host)) declared = (await this.setDeclaredHosts(orgId, actor, n.id, [...declared, host])).declaredHosts
    return { network: await this.view({ ...n, declaredHosts: declared }), declared: host, created: Boolean(token), ...(token ? { token } : {}) }
  }

  /** session_start's lookup (org-scoped: another org's network is simply not found) */
  async resolve(orgId: string, ref: string) {
    const n = await store.resolveNetwork(this.deps.db, orgId, ref)
    return n ? { id: n.id, declaredHosts: n.declaredHosts } : null
  }

  // --- broker hooks --------------------------------------------------------------
  authenticate = (ref: string, token: string) => store.authenticateJoin(this.deps.db, ref, token)
  loadDeclaredHosts = async (networkId: string) => {
    const r = await this.deps.db.query('select declared_hosts from networks where id = $1', [networkId])
    return (r.rows[0]?.declared_hosts as string[] | undefined) ?? []
  }
  onRegister = async (reg: { networkId: string; orgId: string; daemonId: string; host: string; version: string; connectedSince: string }) => {
    await store.upsertDaemon(this.deps.db, reg)
    this.deps.hub?.notify(reg.networkId)
  }
  onDisconnect = async (d: { networkId: string; daemonId: string }) => {
    await store.markDaemonOffline(this.deps.db, d.networkId, d.daemonId)
    this.deps.hub?.notify(d.networkId)
  }
}

/** A target for local reach: a host[:port] or an http(s) URL; returns the canonical host entry. */
export function targetHost(target: string): string {
  let candidate = target.trim()
  if (/^https?:\/\//i.test(candidate)) {
    try {
      const u = new URL(candidate)
      candidate = u.port ? `${u.hostname}:${u.port}` : u.hostname
    } catch {
      throw badRequest('invalid request: target: not a valid URL')
    }
  }
  const p = parseHostPattern(candidate)
  if (!p) throw badRequest('invalid request: target: must be a host[:port] or an http(s) URL')
  return formatHostPattern(p)
}
