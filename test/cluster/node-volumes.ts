// A pod's volumes on the test node (not a test file): each a directory under the pod's state
// directory, bind-mounted in the container's own mount namespace (node-pods.ts), owned as
// the kubelet would set it. emptyDir, hostPath, secret, configMap, downwardAPI, projected;
// contents are not re-synced after start (projected tokens are refreshed).
// Details: docs/testing.md#the-cluster-tests-test-node
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import type { KubeClient, Obj } from './kube-client.ts'
import { type ConfigError, type ObjectReader, podField, resourceField } from './node-env.ts'

/** a volume cannot be set up yet (missing Secret, unsupported type): retried, like FailedMount */
export class MountError extends Error {}

interface File { data: Buffer; mode: number }

/** a relative path that stays inside the volume */
function safeJoin(root: string, rel: string): string {
  const n = normalize(rel)
  if (n.startsWith('..') || n.startsWith('/')) throw new MountError(`volume path ${rel} escapes the volume`)
  return join(root, n)
}

export class PodVolumes {
  /** volume name → host directory (or file, for hostPath files) */
  readonly paths = new Map<string, string>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private stopped = false

  private readonly client: KubeClient
  private readonly pod: () => Obj
  private readonly dir: string
  private readonly reader: () => ObjectReader
  private readonly log: (m: string) => void
  constructor(
    client: KubeClient,
    pod: () => Obj,
    dir: string,
    reader: () => ObjectReader,
    log: (m: string) => void,
  ) {
    this.client = client
    this.pod = pod
    this.dir = dir
    this.reader = reader
    this.log = log
  }

  private get fsGroup(): number | undefined {
    return this.pod().spec.securityContext?.fsGroup
  }

  /** sets up every volume; MountError when one cannot be (the caller retries) */
  async prepare(): Promise<void> {
    const pod = this.pod()
    for (const v of pod.spec.volumes ?? []) {
      const path = join(this.dir, v.name)
      if (v.emptyDir) {
        // emptyDir survives container restarts: created once, never rewritten
        if (!existsSync(path)) {
          mkdirSync(path, { recursive: true })
          chmodSync(path, 0o777)
          this.own(path, true)
        }
      } else if (v.hostPath) {
        const t = v.hostPath.type ?? ''
        if (!existsSync(v.hostPath.path)) {
          if (t === 'DirectoryOrCreate') mkdirSync(v.hostPath.path, { recursive: true })
          else if (t === 'FileOrCreate') { mkdirSync(dirname(v.hostPath.path), { recursive: true }); writeFileSync(v.hostPath.path, '') }
          else if (t) throw new MountError(`hostPath ${v.hostPath.path} does not exist`)
        }
        this.paths.set(v.name, v.hostPath.path)
        continue
      } else if (v.secret || v.configMap || v.downwardAPI || v.projected) {
        this.writeFiles(path, await this.files(v))
        if (v.projected) this.scheduleTokenRefresh(v, path)
      } else {
        throw new MountError(`volume ${v.name}: type not supported by the test node (${Object.keys(v).filter((k) => k !== 'name').join(',')})`)
      }
      this.paths.set(v.name, path)
    }
  }

  private async files(v: Obj): Promise<Map<string, File>> {
    const out = new Map<string, File>()
    const def = v.secret?.defaultMode ?? v.configMap?.defaultMode ?? v.downwardAPI?.defaultMode ?? v.projected?.defaultMode ?? 0o644
    if (v.secret) await this.objectFiles(out, 'secrets', { name: v.secret.secretName, items: v.secret.items, optional: v.secret.optional }, def)
    if (v.configMap) await this.objectFiles(out, 'configmaps', v.configMap, def)
    if (v.downwardAPI) this.downwardFiles(out, v.downwardAPI.items ?? [], def)
    for (const s of v.projected?.sources ?? []) {
      if (s.secret) await this.objectFiles(out, 'secrets', s.secret, def)
      else if (s.configMap) await this.objectFiles(out, 'configmaps', s.configMap, def)
      else if (s.downwardAPI) this.downwardFiles(out, s.downwardAPI.items ?? [], def)
      else if (s.serviceAccountToken) out.set(s.serviceAccountToken.path, { data: Buffer.from((await this.token(s.serviceAccountToken)).token), mode: def })
    }
    return out
  }

  private async objectFiles(out: Map<string, File>, kind: 'secrets' | 'configmaps', src: Obj, def: number): Promise<void> {
    const data = await this.reader().data(kind, src.name)
    if (!data) {
      if (src.optional) return
      throw new MountError(`${kind === 'secrets' ? 'secret' : 'configmap'} "${src.name}" not found`)
    }
    if (!src.items?.length) {
      for (const [k, v] of Object.entries(data)) out.set(k, { data: v, mode: def })
      return
    }
    for (const it of src.items) {
      if (!(it.key in data)) {
        if (src.optional) continue
        throw new MountError(`key ${it.key} not found in ${kind === 'secrets' ? 'Secret' : 'ConfigMap'} ${this.pod().metadata.namespace}/${src.name}`)
      }
      out.set(it.path, { data: data[it.key], mode: it.mode ?? def })
    }
  }

  private downwardFiles(out: Map<string, File>, items: Obj[], def: number): void {
    const pod = this.pod()
    for (const it of items) {
      let value: string
      try {
        value = it.fieldRef ? podField(pod, it.fieldRef.fieldPath) : resourceField(pod, undefined, it.resourceFieldRef ?? {})
      } catch (e) {
        throw new MountError((e as ConfigError).message)
      }
      out.set(it.path, { data: Buffer.from(value), mode: it.mode ?? def })
    }
  }

  /** a bound service-account token for this pod (TokenRequest API) */
  private async token(src: Obj): Promise<{ token: string; expiresAt: number }> {
    const pod = this.pod()
    const sa = pod.spec.serviceAccountName || 'default'
    const expirationSeconds = src.expirationSeconds ?? 3600
    const r = await this.client.post(`/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${sa}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: src.audience ? [src.audience] : [],
        expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
      },
    }).catch((e) => { throw new MountError(`service account token for ${sa}: ${(e as Error).message}`) })
    return { token: r.status.token, expiresAt: Date.parse(r.status.expirationTimestamp) }
  }

  /** the kubelet refreshes projected tokens at 80% of their lifetime; so does this */
  private scheduleTokenRefresh(v: Obj, path: string): void {
    const src = (v.projected.sources ?? []).find((s: Obj) => s.serviceAccountToken)?.serviceAccountToken
    if (!src) return
    const ms = Math.max(1000, (src.expirationSeconds ?? 3600) * 800)
    const t = setTimeout(() => void (async () => {
      this.timers.delete(t)
      if (this.stopped) return
      try {
        this.writeFiles(path, await this.files(v))
      } catch (e) {
        this.log(`refreshing volume ${v.name}: ${(e as Error).message}`)
      }
      this.scheduleTokenRefresh(v, path)
    })(), ms)
    t.unref()
    this.timers.add(t)
  }

  /** writes a file set: each file replaced atomically, files no longer present removed */
  private writeFiles(root: string, files: Map<string, File>): void {
    mkdirSync(root, { recursive: true })
    const keep = new Set<string>()
    for (const [rel, f] of files) {
      const target = safeJoin(root, rel)
      keep.add(target)
      mkdirSync(dirname(target), { recursive: true })
      const tmp = join(dirname(target), `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`)
      writeFileSync(tmp, f.data, { mode: f.mode & 0o777 })
      chmodSync(tmp, f.mode & 0o777)
      this.own(tmp, false)
      renameSync(tmp, target)
    }
    const prune = (d: string) => {
      for (const e of readdirSync(d)) {
        const p = join(d, e)
        if (lstatSync(p).isDirectory()) prune(p)
        else if (!keep.has(p)) rmSync(p, { force: true })
      }
    }
    prune(root)
    this.ownTree(root)
  }

  /** with fsGroup: group-owned, group-readable (and writable for emptyDirs), setgid dirs */
  private own(path: string, writable: boolean): void {
    const g = this.fsGroup
    if (g === undefined) return
    chownSync(path, 0, g)
    const st = lstatSync(path)
    const mask = (writable ? 0o660 : 0o440) | (st.isDirectory() ? 0o2110 : 0)
    chmodSync(path, (st.mode & 0o7777) | mask)
  }

  private ownTree(dir: string): void {
    this.own(dir, false)
    for (const e of readdirSync(dir)) {
      const p = join(dir, e)
      if (lstatSync(p).isDirectory()) this.ownTree(p)
    }
  }

  stop(): void {
    this.stopped = true
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }
}
