// How the test node builds a container's environment, as the kubelet does (not a test
// file): envFrom, env with valueFrom (Secrets, ConfigMaps, the downward API), `$(VAR)`
// expansion, and the Service environment variables (always the `kubernetes` Service of
// `default`; the pod's own namespace's Services unless enableServiceLinks is false).
import type { KubeClient, Obj } from './kube-client.ts'
import { ApiError } from './kube-client.ts'

/** the kubelet's CreateContainerConfigError: retried until the Secret or key appears */
export class ConfigError extends Error {}

/** what a container's limits default to when it sets none: the node's allocatable */
export const NODE_CAPACITY = { cpu: '64', memory: '256Gi', pods: '2000', 'ephemeral-storage': '1Ti' }

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
}

/** a resource.Quantity as a number ("500m" → 0.5, "1Gi" → 1073741824) */
export function quantity(q: string | number): number {
  if (typeof q === 'number') return q
  const m = /^([+-]?[\d.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(q.trim())
  if (!m || !(m[2] in SUFFIX)) throw new Error(`bad quantity ${q}`)
  return Number(m[1]) * SUFFIX[m[2]]
}

/**
 * Kubernetes' `$(VAR)` expansion: a defined name is replaced, `$$` is a literal `$`, and an
 * undefined reference is left as written.
 */
export function expand(s: string, lookup: (name: string) => string | undefined): string {
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c !== '$' || i + 1 >= s.length) { out += c; continue }
    const next = s[i + 1]
    if (next === '$') { out += '$'; i++; continue }
    if (next === '(') {
      const end = s.indexOf(')', i + 2)
      if (end < 0) { out += s.slice(i); break }
      const name = s.slice(i + 2, end)
      const v = lookup(name)
      out += v ?? `$(${name})`
      i = end
      continue
    }
    out += c
  }
  return out
}

/** a downward-API field of the pod (env fieldRef and downwardAPI volume items) */
export function podField(pod: Obj, path: string): string {
  const meta = pod.metadata
  const mapKey = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path)
  if (mapKey) return meta[mapKey[1]]?.[mapKey[2]] ?? ''
  switch (path) {
    case 'metadata.name': return meta.name
    case 'metadata.namespace': return meta.namespace
    case 'metadata.uid': return meta.uid
    case 'metadata.labels':
    case 'metadata.annotations': {
      // the volume form: one `key="value"` line each, sorted
      const m: Record<string, string> = meta[path.split('.')[1]] ?? {}
      return Object.keys(m).sort().map((k) => `${k}=${JSON.stringify(m[k])}`).join('\n')
    }
    case 'spec.nodeName': return pod.spec.nodeName ?? ''
    case 'spec.serviceAccountName': return pod.spec.serviceAccountName ?? ''
    case 'status.hostIP': return pod.status?.hostIP ?? ''
    case 'status.podIP': return pod.status?.podIP ?? ''
    case 'status.podIPs': return (pod.status?.podIPs ?? []).map((p: Obj) => p.ip).join(',')
  }
  throw new ConfigError(`unsupported fieldRef ${path}`)
}

/** resourceFieldRef: a limit or request divided by the divisor, rounded up (limits default to the node's) */
export function resourceField(pod: Obj, defaultContainer: string | undefined, ref: Obj): string {
  const name = ref.containerName || defaultContainer
  const c = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].find((x: Obj) => x.name === name)
  if (!c) throw new ConfigError(`resourceFieldRef: no container ${name}`)
  const [kind, res] = String(ref.resource).split(/\.(.*)/s)
  const limits = { ...NODE_CAPACITY, ...(c.resources?.limits ?? {}) } as Record<string, string>
  // an unset request reads as the limit when one is set, else 0 (the kubelet's defaulting)
  const raw = kind === 'limits' ? limits[res] : (c.resources?.requests?.[res] ?? c.resources?.limits?.[res] ?? '0')
  if (raw === undefined) throw new ConfigError(`resourceFieldRef: unsupported resource ${ref.resource}`)
  const divisor = quantity(ref.divisor ?? '1')
  return String(Math.ceil(quantity(raw) / (divisor || 1)))
}

/** Secrets and ConfigMaps read once per container start (the kubelet reads them at start too) */
export class ObjectReader {
  private readonly cache = new Map<string, Promise<Obj | undefined>>()
  private readonly client: KubeClient
  private readonly namespace: string
  constructor(client: KubeClient, namespace: string) {
    this.client = client
    this.namespace = namespace
  }

  private read(kind: 'secrets' | 'configmaps', name: string): Promise<Obj | undefined> {
    const k = `${kind}/${name}`
    let p = this.cache.get(k)
    if (!p) {
      p = this.client.get(`/api/v1/namespaces/${this.namespace}/${kind}/${name}`).catch((e) => {
        if (e instanceof ApiError && e.status === 404) return undefined
        throw e
      })
      this.cache.set(k, p)
    }
    return p
  }

  /** every key of a Secret or ConfigMap as text; undefined when the object does not exist */
  async data(kind: 'secrets' | 'configmaps', name: string): Promise<Record<string, Buffer> | undefined> {
    const o = await this.read(kind, name)
    if (!o) return undefined
    const out: Record<string, Buffer> = {}
    if (kind === 'secrets') for (const [k, v] of Object.entries<string>(o.data ?? {})) out[k] = Buffer.from(v, 'base64')
    else {
      for (const [k, v] of Object.entries<string>(o.data ?? {})) out[k] = Buffer.from(v, 'utf8')
      for (const [k, v] of Object.entries<string>(o.binaryData ?? {})) out[k] = Buffer.from(v, 'base64')
    }
    return out
  }

  /** one key; undefined when optional and missing, ConfigError when required and missing */
  async key(kind: 'secrets' | 'configmaps', ref: Obj): Promise<string | undefined> {
    const what = kind === 'secrets' ? 'Secret' : 'ConfigMap'
    const data = await this.data(kind, ref.name)
    if (!data) {
      if (ref.optional) return undefined
      throw new ConfigError(`${kind === 'secrets' ? 'secret' : 'configmap'} "${ref.name}" not found`)
    }
    const v = data[ref.key]
    if (v === undefined) {
      if (ref.optional) return undefined
      throw new ConfigError(`couldn't find key ${ref.key} in ${what} ${this.namespace}/${ref.name}`)
    }
    return v.toString('utf8')
  }
}

/** docker-links style variables of one Service (FOO_SERVICE_HOST, FOO_PORT_80_TCP, …) */
export function serviceEnv(svc: Obj): Record<string, string> {
  const ip = svc.spec?.clusterIP
  if (!ip || ip === 'None') return {}
  const n = String(svc.metadata.name).toUpperCase().replace(/-/g, '_')
  const ports: Obj[] = svc.spec.ports ?? []
  const out: Record<string, string> = { [`${n}_SERVICE_HOST`]: ip }
  if (!ports.length) return out
  out[`${n}_SERVICE_PORT`] = String(ports[0].port)
  for (const p of ports) if (p.name) out[`${n}_SERVICE_PORT_${String(p.name).toUpperCase().replace(/-/g, '_')}`] = String(p.port)
  const proto0 = String(ports[0].protocol ?? 'TCP').toLowerCase()
  out[`${n}_PORT`] = `${proto0}://${ip}:${ports[0].port}`
  for (const p of ports) {
    const proto = String(p.protocol ?? 'TCP')
    const pre = `${n}_PORT_${p.port}_${proto.toUpperCase()}`
    out[pre] = `${proto.toLowerCase()}://${ip}:${p.port}`
    out[`${pre}_PROTO`] = proto.toLowerCase()
    out[`${pre}_PORT`] = String(p.port)
    out[`${pre}_ADDR`] = ip
  }
  return out
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/

/**
 * The container's variables from its spec, in the kubelet's order: envFrom, then env (each
 * value expanded against what came before and the Service variables), then the Service
 * variables for names not yet set. The image's ENV is the caller's to put underneath.
 */
export async function containerEnv(opts: {
  pod: Obj
  container: Obj
  reader: ObjectReader
  services: Obj[]
}): Promise<Record<string, string>> {
  const { pod, container, reader } = opts
  const svcEnv: Record<string, string> = {}
  const ns = pod.metadata.namespace
  const links = pod.spec.enableServiceLinks !== false
  // default's `kubernetes` Service is always there; others only with service links on
  for (const s of opts.services) {
    const isMaster = s.metadata.namespace === 'default' && s.metadata.name === 'kubernetes'
    if (isMaster || (links && s.metadata.namespace === ns)) Object.assign(svcEnv, serviceEnv(s))
  }
  const env: Record<string, string> = {}
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? ''
    const kind = from.secretRef ? 'secrets' : 'configmaps'
    const ref = from.secretRef ?? from.configMapRef
    const data = await reader.data(kind, ref.name)
    if (!data) {
      if (ref.optional) continue
      throw new ConfigError(`${kind === 'secrets' ? 'secret' : 'configmap'} "${ref.name}" not found`)
    }
    for (const [k, v] of Object.entries(data)) if (ENV_NAME.test(prefix + k)) env[prefix + k] = v.toString('utf8')
  }
  const lookup = (name: string) => env[name] ?? svcEnv[name]
  for (const e of container.env ?? []) {
    let v: string | undefined
    if (e.valueFrom) {
      const f = e.valueFrom
      if (f.secretKeyRef) v = await reader.key('secrets', f.secretKeyRef)
      else if (f.configMapKeyRef) v = await reader.key('configmaps', f.configMapKeyRef)
      else if (f.fieldRef) v = podField(pod, f.fieldRef.fieldPath)
      else if (f.resourceFieldRef) v = resourceField(pod, container.name, f.resourceFieldRef)
      if (v === undefined) continue // an optional reference that is missing: no variable
    } else {
      v = expand(e.value ?? '', lookup)
    }
    env[e.name] = v
  }
  for (const [k, v] of Object.entries(svcEnv)) if (!(k in env)) env[k] = v
  return env
}
