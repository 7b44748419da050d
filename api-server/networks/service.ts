// Local reach: networks as rows and Network resources, the daemon registry fed
// by the tunnel broker, and the lookups session_start and the broker need.
import type { Db, Queryable } from '../store/db.ts'
import { tx } from '../store/db.ts'
import type { BrokerOptions, TunnelBroker } from '../tunnel-broker/broker.ts'
import { recordAudit } from '../audit/audit.ts'
import { errors } from '../../contracts/errors.ts'
import { parseHostPattern, formatHostPattern } from '../../contracts/hosts.ts'
import type { NetworkDirectory } from '../sessions/directories.ts'
import { countDaemons, daemonStates, type DaemonChanges } from './counts.ts'
import type { ReplicaRegistry } from '../replicas/registry.ts'
import type { TunnelFanout } from '../replicas/fanout.ts'
import type { NetworkResources } from './resources.ts'
import * as store from './store.ts'

export interface NetworkView {
  id: string
  name: string
  daemonCount: number
  onlineDaemonCount: number
  declaredHosts: string[]
}

/**
 * The broker's hooks: the join check, the registry rows and the declared hosts. They need
 * only the database (and the change feed), so they exist before the broker, which exists
 * before LocalReach: no cycle, nothing plugged in later.
 */
export function daemonRegistry(deps: { db: Db; changes: DaemonChanges; replicaId: string }): Pick<BrokerOptions, 'authenticate' | 'onRegister' | 'onDisconnect' | 'loadDeclaredHosts'> {
  const { db, changes, replicaId } = deps
  return {
    authenticate: (ref, token) => store.authenticateJoin(db, ref, token),
    loadDeclaredHosts: (networkId) => store.declaredHostsOf(db, networkId),
    onRegister: async (reg) => {
      await store.upsertDaemon(db, { ...reg, replicaId })
      changes.notify(reg.networkId)
    },
    onDisconnect: async (d) => {
      await store.markDaemonOffline(db, d.networkId, d.daemonId, replicaId)
      changes.notify(d.networkId)
    },
  }
}

export interface LocalReachDeps {
  db: Db
  /** the tunnel broker daemons joined (built with daemonRegistry's hooks) */
  broker: TunnelBroker
  /** the operator's copy of each network (NO_NETWORK_RESOURCES without a session plane) */
  resources: NetworkResources
  /** this replica, for whose daemons the broker's word counts */
  replica: Pick<ReplicaRegistry, 'id' | 'deadAfterSql'>
  /** changes every replica's daemons must hear (declared hosts, rejoin) */
  fanout: Pick<TunnelFanout, 'hostsChanged' | 'disconnect'>
}

export class LocalReach implements NetworkDirectory {
  private readonly deps: LocalReachDeps
  constructor(deps: LocalReachDeps) {
    this.deps = deps
  }

  /** the tunnel broker, for what installs its join throttle (limits/) */
  get broker(): TunnelBroker {
    return this.deps.broker
  }

  counts(networkId: string) {
    return countDaemons(this.deps, { networkId })
  }

  async view(n: store.NetworkRow): Promise<NetworkView> {
    return { id: n.id, name: n.name, ...(await this.counts(n.id)), declaredHosts: n.declaredHosts }
  }

  /**
   * A new network and its first join token. `alsoInTx` runs in the insert's transaction
   * (a seed reach grant is bound to the network there); when it throws, no network exists.
   */
  async create({ orgId, actor, name, alsoInTx }: { orgId: string; actor: string; name: string; alsoInTx?: (c: Queryable, networkId: string) => Promise<void> }) {
    const { network, token } = await tx(this.deps.db, async (c) => {
      const out = await store.insertNetwork(c, orgId, store.validateNetworkName(name))
      if (alsoInTx) await alsoInTx(c, out.network.id)
      return out
    })
    // the operator's copy: retried, and a write that still fails is logged and repaired
    await this.deps.resources.sync(network.id)
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.create', targetType: 'network', targetId: network.id })
    return { network: { id: network.id, name: network.name, daemonCount: 0, onlineDaemonCount: 0 }, token }
  }

  async list({ orgId }: { orgId: string }) {
    return Promise.all((await store.listNetworks(this.deps.db, orgId)).map((n) => this.view(n)))
  }

  async get({ orgId, id }: { orgId: string; id: string }) {
    return this.view(await store.getNetwork(this.deps.db, orgId, id))
  }

  async setDeclaredHosts({ orgId, actor, id, hosts }: { orgId: string; actor: string; id: string; hosts: string[] }) {
    return this.hostsChanged(orgId, actor, await store.setDeclaredHosts(this.deps.db, orgId, id, store.validateDeclaredHosts(hosts)))
  }

  /** what follows a change of declared hosts: the operator's copy, the daemons' list, the audit row */
  private async hostsChanged(orgId: string, actor: string, n: store.NetworkRow) {
    await this.deps.resources.sync(n.id)
    // live sessions keep their launch-time list; daemons re-check against the new one
    await this.deps.fanout.hostsChanged(n.id, n.declaredHosts)
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.update', targetType: 'network', targetId: n.id })
    return this.view(n)
  }

  async rotateToken({ orgId, actor, id }: { orgId: string; actor: string; id: string }) {
    const n = await store.getNetwork(this.deps.db, orgId, id)
    const token = await tx(this.deps.db, async (c) => {
      await store.revokeTokens(c, n.id)
      return store.insertToken(c, n.id)
    })
    // daemons joined with the old token must rejoin, and fail with 401
    await this.deps.fanout.disconnect(n.id, 'join token rotated')
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.rotate_token', targetType: 'network', targetId: n.id })
    return { network: await this.view(n), token }
  }

  async delete({ orgId, actor, id }: { orgId: string; actor: string; id: string }) {
    const n = await store.deleteNetworkRow(this.deps.db, orgId, id)
    await this.deps.fanout.disconnect(n.id, 'network deleted')
    await this.deps.resources.sync(n.id)
    await recordAudit(this.deps.db, { orgId, actor, action: 'network.delete', targetType: 'network', targetId: n.id })
  }

  async daemons({ orgId, id }: { orgId: string; id: string }) {
    const n = await store.getNetwork(this.deps.db, orgId, id)
    return daemonStates(this.deps, n.id)
  }

  /**
   * local_reach_ensure: the backing network for a target, created when missing, with
   * the target declared. A new network's join token is returned once.
   */
  async ensure({ orgId, actor, target, networkName = 'local' }: { orgId: string; actor: string; target: string; networkName?: string }) {
    const host = targetHost(target)
    let n = await store.resolveNetwork(this.deps.db, orgId, networkName)
    let token: { tokenId: string; secret: string } | undefined
    if (!n) {
      const created = await this.create({ orgId, actor, name: networkName })
      token = created.token
      n = await store.getNetwork(this.deps.db, orgId, created.network.id)
    }
    return this.declare({ orgId, actor, network: n, host, token })
  }

  /** local_reach_ensure's last step: the host declared on the network (once), and the answer. */
  async declare({ orgId, actor, network: n, host, token }: { orgId: string; actor: string; network: store.NetworkRow; host: string; token?: { tokenId: string; secret: string } }) {
    let declared = n.declaredHosts
    if (!declared.includes(host)) {
      // appended in one statement: two calls declaring different hosts at once keep both
      const appended = await store.appendDeclaredHost(this.deps.db, orgId, n.id, host)
      declared = appended ? (await this.hostsChanged(orgId, actor, appended)).declaredHosts : (await store.getNetwork(this.deps.db, orgId, n.id)).declaredHosts
    }
    return { network: await this.view({ ...n, declaredHosts: declared }), declared: host, created: Boolean(token), ...(token ? { token } : {}) }
  }

  /** session_start's lookup (org-scoped: another org's network is simply not found) */
  async resolve({ orgId, ref }: { orgId: string; ref: string }) {
    const n = await store.resolveNetwork(this.deps.db, orgId, ref)
    return n ? { id: n.id, declaredHosts: n.declaredHosts } : null
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
      throw errors.invalidRequest('target: not a valid URL')
    }
  }
  const p = parseHostPattern(candidate)
  if (!p) throw errors.invalidRequest('target: must be a host[:port] or an http(s) URL')
  return formatHostPattern(p)
}
