// A small Kubernetes API server for tests, over real HTTP: no cluster runs in the unit phase,
// so the Kubernetes adapters are tested against this at the wire, with the api-server's
// semantics as the adapters and client-node rely on them (watch and 410s, merge patch only,
// the status subresource, preconditions, finalizers, CRD validation and pruning), plus test
// hooks. What it implements: docs/testing.md#the-fake-kubernetes-api-server
import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { isDeepStrictEqual } from 'node:util'
import { parseLabelSelector } from '../../../operator/label-selector.ts'
import { applyMergePatch } from '../../../operator/merge-patch.ts'
import { validateAndPrune, type Schema } from './openapi.ts'

type Obj = Record<string, any>

export interface ResourceType {
  group: string // '' = core
  version: string
  plural: string
  kind: string
  statusSubresource: boolean
  /** generation follows spec changes (custom resources) */
  generation: boolean
  schema?: Schema
  shortNames?: string[]
  /** false: cluster-scoped (/api/v1/nodes/<name>), stored under namespace '' */
  namespaced?: boolean
}

export const CORE_TYPES: ResourceType[] = [
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', statusSubresource: true, generation: true, shortNames: ['po'] },
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', statusSubresource: false, generation: false },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', statusSubresource: false, generation: false },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', statusSubresource: false, generation: false },
  { group: '', version: 'v1', plural: 'nodes', kind: 'Node', statusSubresource: true, generation: false, namespaced: false, shortNames: ['no'] },
]

/** the resource type a CustomResourceDefinition document describes */
export function typeFromCrd(crd: Obj): ResourceType {
  const v = crd.spec.versions.find((x: Obj) => x.storage) ?? crd.spec.versions[0]
  return {
    group: crd.spec.group,
    version: v.name,
    plural: crd.spec.names.plural,
    kind: crd.spec.names.kind,
    statusSubresource: !!v.subresources?.status,
    generation: true,
    schema: v.schema?.openAPIV3Schema,
    shortNames: crd.spec.names.shortNames,
  }
}

interface HistoryEntry {
  rv: number
  type: 'ADDED' | 'MODIFIED' | 'DELETED'
  key: string // plural/namespace
  object: Obj
  prev?: Obj
}

interface Watcher {
  key: string
  res: ServerResponse
  socket: Socket
  matches: (labels: Record<string, string>) => boolean
  bookmarks: boolean
  timer?: NodeJS.Timeout
}

export interface RequestRecord {
  method: string
  path: string
  query: Record<string, string>
  contentType?: string
}

interface InjectedFailure {
  method: string
  match: RegExp
  status: number
  times: number
}

export class HttpError extends Error {
  readonly code: number
  readonly reason: string
  constructor(
    code: number,
    reason: string,
    message: string,
  ) {
    super(message)
    this.code = code
    this.reason = reason
  }
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
const clone = <T>(v: T): T => structuredClone(v)
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/

export class FakeKubeApi extends EventEmitter {
  readonly requests: RequestRecord[] = []
  private readonly types: ResourceType[]
  private readonly objects = new Map<string, Obj>() // plural/ns/name
  private readonly history: HistoryEntry[] = []
  private readonly watchers = new Set<Watcher>()
  private readonly sockets = new Set<Socket>()
  private readonly failures: InjectedFailure[] = []
  private readonly holds: { method: string; match: RegExp; arrived: () => void; released: Promise<void> }[] = []
  private rv = 100
  private compactedThrough = 0
  private server?: Server
  url = ''

  constructor(opts: { types: ResourceType[]; token?: string }) {
    super()
    this.types = [...CORE_TYPES, ...opts.types]
    this.token = opts.token
  }
  private readonly token?: string

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    this.server.on('connection', (s) => {
      this.sockets.add(s)
      s.on('close', () => this.sockets.delete(s))
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  async close(): Promise<void> {
    for (const w of this.watchers) this.endWatch(w)
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r())
  }

  // --- test hooks -----------------------------------------------------------------------

  /** every stored object of a type in a namespace (copies) */
  list(plural: string, namespace: string): Obj[] {
    return [...this.objects.entries()].filter(([k]) => k.startsWith(`${plural}/${namespace}/`)).map(([, o]) => clone(o))
  }

  get(plural: string, namespace: string, name: string): Obj | undefined {
    const o = this.objects.get(`${plural}/${namespace}/${name}`)
    return o && clone(o)
  }

  /** a server-side write (as a controller or the kubelet would make): mutate, bump version, emit */
  mutate(plural: string, namespace: string, name: string, fn: (o: Obj) => void): Obj {
    const key = `${plural}/${namespace}/${name}`
    const cur = this.objects.get(key)
    if (!cur) throw new Error(`${key} not found`)
    const next = clone(cur)
    fn(next)
    return this.commit(this.type(plural), namespace, cur, next)
  }

  /** a server-side create (a node registering, a kubelet's first Lease) */
  add(plural: string, namespace: string, obj: Obj): Obj {
    return this.create(this.type(plural), namespace, obj)
  }

  /** server-side delete, bypassing finalizers' API path (e.g. a kubelet finishing a pod) */
  remove(plural: string, namespace: string, name: string): void {
    const cur = this.objects.get(`${plural}/${namespace}/${name}`)
    if (cur) this.removeObject(this.type(plural), namespace, cur)
  }

  /** cut every open watch mid-stream (connection reset) */
  dropWatches(plural?: string): number {
    let n = 0
    for (const w of [...this.watchers]) {
      if (plural && !w.key.startsWith(`${plural}/`)) continue
      this.watchers.delete(w)
      clearTimeout(w.timer)
      w.socket.destroy()
      n++
    }
    return n
  }

  /** answer every open watch with a 410 ERROR event (history expired), then end it */
  expireWatches(plural?: string): number {
    let n = 0
    for (const w of [...this.watchers]) {
      if (plural && !w.key.startsWith(`${plural}/`)) continue
      this.writeEvent(w, { type: 'ERROR', object: this.status(410, 'Expired', `too old resource version: (${this.compactedThrough})`) })
      this.endWatch(w)
      n++
    }
    return n
  }

  /** end every open watch normally (the server's timeout) */
  closeWatches(plural?: string): number {
    let n = 0
    for (const w of [...this.watchers]) {
      if (plural && !w.key.startsWith(`${plural}/`)) continue
      this.endWatch(w)
      n++
    }
    return n
  }

  /** forget all history: any watch from an older version now gets 410 */
  compact(): void {
    this.compactedThrough = this.rv
    this.history.length = 0
  }

  /** send a BOOKMARK with the current version to every watch that asked for them */
  bookmark(): void {
    for (const w of this.watchers) if (w.bookmarks) this.writeEvent(w, { type: 'BOOKMARK', object: { kind: '', apiVersion: '', metadata: { resourceVersion: String(this.rv) } } })
  }

  openWatches(plural?: string): number {
    return [...this.watchers].filter((w) => !plural || w.key.startsWith(`${plural}/`)).length
  }

  /** fail the next `times` requests whose path+query matches with `status` (0 = never answer) */
  failNext(method: string, match: RegExp, status: number, times = 1): void {
    this.failures.push({ method, match, status, times })
  }

  /**
   * Nodes whose kubelet is gone: a graceful delete of a pod on one only marks it
   * (deletionTimestamp) and the pod stays, as on a real cluster; gracePeriodSeconds 0
   * (a force delete) removes it.
   */
  readonly deadNodes = new Set<string>()

  /**
   * Hold the next request whose path+query matches until `release()`, then answer it from
   * the store as it is then (a write that raced it lands first). `arrived` resolves when it is held.
   */
  holdNext(method: string, match: RegExp): { arrived: Promise<void>; release: () => void } {
    let arrived!: () => void
    let release!: () => void
    const arrival = new Promise<void>((r) => (arrived = r))
    this.holds.push({ method, match, arrived: () => arrived(), released: new Promise<void>((r) => (release = r)) })
    return { arrived: arrival, release: () => release() }
  }

  clearFailures(): void {
    this.failures.length = 0
  }

  get resourceVersion(): string {
    return String(this.rv)
  }

  // --- HTTP -------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x')
    const query = Object.fromEntries(url.searchParams)
    this.requests.push({ method: req.method ?? '', path: url.pathname, query, contentType: req.headers['content-type'] })
    try {
      if (this.token !== undefined && req.headers.authorization !== `Bearer ${this.token}`) throw new HttpError(401, 'Unauthorized', 'Unauthorized')
      const failure = this.failures.find((f) => f.method === req.method && f.match.test(url.pathname + url.search) && f.times > 0)
      if (failure) {
        failure.times--
        if (failure.status === 0) return // hang: never answer (a dead peer)
        throw new HttpError(failure.status, failure.status === 409 ? 'Conflict' : 'InternalError', `injected failure ${failure.status}`)
      }
      const body = await readBody(req)
      const hold = this.holds.findIndex((h) => h.method === req.method && h.match.test(url.pathname + url.search))
      if (hold >= 0) {
        const [h] = this.holds.splice(hold, 1)
        h!.arrived()
        await h!.released
      }
      const result = this.route(req.method ?? 'GET', url.pathname, query, req.headers['content-type'], body, res)
      if (result === undefined) return // streaming (watch)
      send(res, result.code, result.body)
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, 'InternalError', err instanceof Error ? err.message : String(err))
      send(res, e.code, this.status(e.code, e.reason, e.message))
    }
  }

  private route(method: string, path: string, q: Record<string, string>, contentType: string | undefined, body: string, res: ServerResponse): { code: number; body: unknown } | undefined {
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent)
    // discovery
    if (method === 'GET' && parts.length === 1 && parts[0] === 'api') return ok({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] })
    if (method === 'GET' && parts.length === 2 && parts[0] === 'api' && parts[1] === 'v1') return ok(this.resourceList('', 'v1'))
    if (method === 'GET' && parts.length === 1 && parts[0] === 'apis') return ok({ kind: 'APIGroupList', apiVersion: 'v1', groups: this.groups() })
    if (method === 'GET' && parts.length === 2 && parts[0] === 'apis') {
      const g = this.groups().find((x) => x.name === parts[1])
      if (!g) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource')
      return ok({ kind: 'APIGroup', apiVersion: 'v1', ...g })
    }
    if (method === 'GET' && parts.length === 3 && parts[0] === 'apis') {
      if (!this.types.some((t) => t.group === parts[1] && t.version === parts[2])) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource')
      return ok(this.resourceList(parts[1], parts[2]))
    }
    // resources: /api/v1/namespaces/ns/plural[/name[/status]] or /apis/g/v/namespaces/...
    let group: string, version: string, rest: string[]
    if (parts[0] === 'api') [group, version, rest] = ['', parts[1], parts.slice(2)]
    else if (parts[0] === 'apis') [group, version, rest] = [parts[1], parts[2], parts.slice(3)]
    else throw new HttpError(404, 'NotFound', 'the server could not find the requested resource')
    const namespaced = rest[0] === 'namespaces' && rest.length >= 3
    const [ns, plural, name, sub] = namespaced ? rest.slice(1) : ['', ...rest]
    const type = this.types.find((t) => t.group === group && t.version === version && t.plural === plural)
    if (!type || (type.namespaced ?? true) !== namespaced) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource')
    if (sub !== undefined && (sub !== 'status' || !type.statusSubresource)) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource')

    if (name === undefined) {
      if (method === 'GET' && (q.watch === 'true' || q.watch === '1')) return this.watch(type, ns, q, res)
      if (method === 'GET') return ok(this.listObjects(type, ns, q))
      if (method === 'POST') return { code: 201, body: this.create(type, ns, parseJson(body)) }
      throw new HttpError(405, 'MethodNotAllowed', 'method not allowed')
    }
    const key = `${plural}/${ns}/${name}`
    switch (method) {
      case 'GET': {
        const o = this.objects.get(key)
        if (!o) throw notFound(type, name)
        return ok(clone(o))
      }
      case 'PATCH':
        if (contentType?.split(';')[0].trim() !== 'application/merge-patch+json') {
          throw new HttpError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json (got ${contentType ?? 'none'})`)
        }
        return ok(this.patch(type, ns, name, parseJson(body), sub === 'status'))
      case 'PUT':
        return ok(this.replace(type, ns, name, parseJson(body), sub === 'status'))
      case 'DELETE':
        return ok(this.delete(type, ns, name, body ? parseJson(body) : {}))
      default:
        throw new HttpError(405, 'MethodNotAllowed', 'method not allowed')
    }
  }

  private groups() {
    const byGroup = new Map<string, Set<string>>()
    for (const t of this.types) if (t.group) (byGroup.get(t.group) ?? byGroup.set(t.group, new Set()).get(t.group)!).add(t.version)
    return [...byGroup].map(([name, versions]) => {
      const vs = [...versions].map((v) => ({ groupVersion: `${name}/${v}`, version: v }))
      return { name, versions: vs, preferredVersion: vs[0] }
    })
  }

  private resourceList(group: string, version: string) {
    const resources = this.types
      .filter((t) => t.group === group && t.version === version)
      .flatMap((t) => [
        { name: t.plural, singularName: t.kind.toLowerCase(), namespaced: t.namespaced ?? true, kind: t.kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], ...(t.shortNames ? { shortNames: t.shortNames } : {}) },
        ...(t.statusSubresource ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced ?? true, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
      ])
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources }
  }

  // --- reads ------------------------------------------------------------------------------

  private listObjects(type: ResourceType, ns: string, q: Record<string, string>) {
    // as a real server answers a version match: only with a version, and never ahead of it
    // (a real one waits 3 s for its watch cache, then gives up with 504)
    if (q.resourceVersionMatch !== undefined) {
      if (q.resourceVersionMatch !== 'NotOlderThan' && q.resourceVersionMatch !== 'Exact') throw new HttpError(400, 'BadRequest', `unsupported resourceVersionMatch ${q.resourceVersionMatch}`)
      if (!q.resourceVersion) throw new HttpError(400, 'BadRequest', 'resourceVersionMatch is forbidden unless resourceVersion is provided')
      if (Number(q.resourceVersion) > this.rv) throw new HttpError(504, 'Timeout', `Too large resource version: ${q.resourceVersion}, current: ${this.rv}`)
    }
    const matches = selector(q.labelSelector)
    let items = this.list(type.plural, ns)
      .filter((o) => matches(o.metadata.labels ?? {}))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    let listRv = String(this.rv)
    if (q.continue) {
      let token: { rv: string; after: string }
      try {
        token = JSON.parse(Buffer.from(q.continue, 'base64url').toString('utf8'))
      } catch {
        throw new HttpError(400, 'BadRequest', 'invalid continue token')
      }
      if (Number(token.rv) < this.compactedThrough) throw new HttpError(410, 'Expired', 'the provided continue parameter is too old')
      listRv = token.rv
      items = items.filter((o) => o.metadata.name > token.after)
    }
    const limit = q.limit ? Number(q.limit) : 0
    let cont: string | undefined
    if (limit > 0 && items.length > limit) {
      items = items.slice(0, limit)
      cont = Buffer.from(JSON.stringify({ rv: listRv, after: items[items.length - 1].metadata.name })).toString('base64url')
    }
    // list items carry no apiVersion/kind for built-in types, as on a real server
    if (!type.schema) items = items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest)
    return { apiVersion: type.group ? `${type.group}/${type.version}` : type.version, kind: `${type.kind}List`, metadata: { resourceVersion: listRv, ...(cont ? { continue: cont } : {}) }, items }
  }

  private watch(type: ResourceType, ns: string, q: Record<string, string>, res: ServerResponse): undefined {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'cache-control': 'no-cache' })
    const w: Watcher = { key: `${type.plural}/${ns}`, res, socket: res.socket!, matches: selector(q.labelSelector), bookmarks: q.allowWatchBookmarks === 'true' }
    const from = q.resourceVersion === undefined || q.resourceVersion === '' || q.resourceVersion === '0' ? undefined : Number(q.resourceVersion)
    if (from !== undefined && (!Number.isInteger(from) || from < this.compactedThrough)) {
      this.writeEvent(w, { type: 'ERROR', object: this.status(410, 'Expired', `too old resource version: ${q.resourceVersion} (${this.compactedThrough})`) })
      res.end()
      return undefined
    }
    if (from === undefined) {
      for (const o of this.list(type.plural, ns).sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))) {
        if (w.matches(o.metadata.labels ?? {})) this.writeEvent(w, { type: 'ADDED', object: o })
      }
    } else for (const e of this.history) if (e.rv > from && e.key === w.key) this.offer(w, e)
    this.watchers.add(w)
    res.on('close', () => {
      this.watchers.delete(w)
      clearTimeout(w.timer)
    })
    const timeout = Number(q.timeoutSeconds ?? 0)
    if (timeout > 0) w.timer = setTimeout(() => this.endWatch(w), timeout * 1000)
    return undefined
  }

  private offer(w: Watcher, e: HistoryEntry): void {
    const now = e.type !== 'DELETED' && w.matches(e.object.metadata.labels ?? {})
    const before = e.prev !== undefined && w.matches(e.prev.metadata.labels ?? {})
    let type: string | undefined
    if (e.type === 'ADDED') type = now ? 'ADDED' : undefined
    else if (e.type === 'DELETED') type = w.matches(e.object.metadata.labels ?? {}) ? 'DELETED' : undefined
    else if (now && before) type = 'MODIFIED'
    else if (now) type = 'ADDED'
    else if (before) type = 'DELETED'
    if (type) this.writeEvent(w, { type, object: e.object })
  }

  private writeEvent(w: Watcher, event: { type: string; object: unknown }): void {
    if (!w.res.writableEnded) w.res.write(JSON.stringify(event) + '\n')
  }

  private endWatch(w: Watcher): void {
    this.watchers.delete(w)
    clearTimeout(w.timer)
    if (!w.res.writableEnded) w.res.end()
  }

  // --- writes -----------------------------------------------------------------------------

  private create(type: ResourceType, ns: string, input: Obj): Obj {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version
    if (input.kind && input.kind !== type.kind) throw new HttpError(400, 'BadRequest', `kind ${input.kind} does not match ${type.kind}`)
    if (input.apiVersion && input.apiVersion !== apiVersion) throw new HttpError(400, 'BadRequest', `apiVersion ${input.apiVersion} does not match ${apiVersion}`)
    const meta = input.metadata ?? {}
    if (meta.namespace && meta.namespace !== ns) throw new HttpError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request')
    let name: string = meta.name ?? ''
    if (!name && meta.generateName) name = `${meta.generateName}${randomUUID().slice(0, 5)}`
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) throw new HttpError(422, 'Invalid', `${type.kind} "${name}" is invalid: metadata.name: must be a DNS-1123 subdomain`)
    const key = `${type.plural}/${ns}/${name}`
    if (this.objects.has(key)) throw new HttpError(409, 'AlreadyExists', `${type.plural} "${name}" already exists`)
    const obj: Obj = { ...clone(input), apiVersion, kind: type.kind }
    obj.metadata = {
      ...clone(meta),
      name,
      ...(ns ? { namespace: ns } : {}),
      uid: randomUUID(),
      resourceVersion: '',
      creationTimestamp: now(),
      ...(type.generation ? { generation: 1 } : {}),
    }
    delete obj.metadata.deletionTimestamp
    delete obj.metadata.generateName
    if (type.statusSubresource) delete obj.status
    if (type.kind === 'Pod') obj.status = { phase: 'Pending', qosClass: 'Burstable' }
    this.validate(type, obj, undefined)
    const rv = ++this.rv
    obj.metadata.resourceVersion = String(rv)
    this.objects.set(key, obj)
    this.record(type, ns, { rv, type: 'ADDED', key: `${type.plural}/${ns}`, object: clone(obj) })
    if (obj.metadata.ownerReferences?.length) this.collectGarbage()
    return clone(obj)
  }

  private patch(type: ResourceType, ns: string, name: string, patch: Obj, status: boolean): Obj {
    const cur = this.objects.get(`${type.plural}/${ns}/${name}`)
    if (!cur) throw notFound(type, name)
    const precondition = patch?.metadata?.resourceVersion
    if (precondition !== undefined && precondition !== cur.metadata.resourceVersion) throw conflict(type, name)
    let next: Obj
    if (status) {
      next = clone(cur)
      if ('status' in (patch ?? {})) {
        const merged = applyMergePatch(cur.status ?? {}, patch.status)
        if (merged && Object.keys(merged).length) next.status = merged
        else delete next.status
      }
    } else {
      next = applyMergePatch(cur, patch)
      if (type.statusSubresource) next.status = clone(cur.status)
      if (next.status === undefined) delete next.status
    }
    return this.update(type, ns, cur, next)
  }

  private replace(type: ResourceType, ns: string, name: string, body: Obj, status: boolean): Obj {
    const cur = this.objects.get(`${type.plural}/${ns}/${name}`)
    if (!cur) throw notFound(type, name)
    const precondition = body?.metadata?.resourceVersion
    if (precondition !== undefined && precondition !== '' && precondition !== cur.metadata.resourceVersion) throw conflict(type, name)
    let next: Obj
    if (status) {
      next = clone(cur)
      next.status = clone(body.status)
    } else {
      next = { ...clone(body), apiVersion: cur.apiVersion, kind: cur.kind }
      if (type.statusSubresource) next.status = clone(cur.status)
    }
    if (next.status === undefined) delete next.status
    return this.update(type, ns, cur, next)
  }

  /** shared tail of patch/replace: server-owned fields, validation, finalizers, no-ops */
  private update(type: ResourceType, ns: string, cur: Obj, next: Obj): Obj {
    next.metadata = {
      ...(next.metadata ?? {}),
      name: cur.metadata.name,
      ...(ns ? { namespace: ns } : {}),
      uid: cur.metadata.uid,
      creationTimestamp: cur.metadata.creationTimestamp,
      resourceVersion: cur.metadata.resourceVersion,
      ...(type.generation ? { generation: cur.metadata.generation } : {}),
      ...(cur.metadata.deletionTimestamp ? { deletionTimestamp: cur.metadata.deletionTimestamp } : {}),
    }
    if (!cur.metadata.deletionTimestamp) delete next.metadata.deletionTimestamp
    for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
      const v = next.metadata[k]
      if (v === null || (v && (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0))) delete next.metadata[k]
    }
    if (cur.metadata.deletionTimestamp) {
      const had = new Set(cur.metadata.finalizers ?? [])
      if ((next.metadata.finalizers ?? []).some((f: string) => !had.has(f))) {
        throw new HttpError(422, 'Invalid', `${type.kind} "${cur.metadata.name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted`)
      }
    }
    if (type.kind === 'Secret' && cur.immutable && (!isDeepStrictEqual(cur.data, next.data) || next.immutable !== true)) {
      throw new HttpError(422, 'Invalid', `Secret "${cur.metadata.name}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`)
    }
    this.validate(type, next, cur)
    if (isDeepStrictEqual(cur, next)) return clone(cur)
    if (type.generation && !isDeepStrictEqual(cur.spec, next.spec)) next.metadata.generation = cur.metadata.generation + 1
    return this.commit(type, ns, cur, next)
  }

  private delete(type: ResourceType, ns: string, name: string, opts: Obj): Obj {
    const cur = this.objects.get(`${type.plural}/${ns}/${name}`)
    if (!cur) throw notFound(type, name)
    const pre = opts?.preconditions ?? {}
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== cur.metadata.resourceVersion) throw conflict(type, name)
    if (pre.uid !== undefined && pre.uid !== cur.metadata.uid) throw conflict(type, name)
    if (type.plural === 'pods' && this.deadNodes.has(cur.spec?.nodeName) && opts?.gracePeriodSeconds !== 0) {
      // a graceful delete waits for the pod's kubelet to confirm; on a dead node it never does
      if (cur.metadata.deletionTimestamp) return clone(cur)
      const next = clone(cur)
      next.metadata.deletionTimestamp = now()
      next.metadata.deletionGracePeriodSeconds = opts?.gracePeriodSeconds ?? cur.spec?.terminationGracePeriodSeconds ?? 30
      const rv = ++this.rv
      next.metadata.resourceVersion = String(rv)
      this.objects.set(`${type.plural}/${ns}/${name}`, next)
      this.record(type, ns, { rv, type: 'MODIFIED', key: `${type.plural}/${ns}`, object: clone(next), prev: clone(cur) })
      return clone(next)
    }
    if (cur.metadata.finalizers?.length) {
      if (cur.metadata.deletionTimestamp) return clone(cur)
      const next = clone(cur)
      next.metadata.deletionTimestamp = now()
      if (type.generation) next.metadata.generation = cur.metadata.generation + 1
      return this.commit(type, ns, cur, next)
    }
    this.removeObject(type, ns, cur)
    return { ...clone(cur), status: cur.status }
  }

  private commit(type: ResourceType, ns: string, cur: Obj, next: Obj): Obj {
    const rv = ++this.rv
    next.metadata.resourceVersion = String(rv)
    const key = `${type.plural}/${ns}`
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.objects.delete(`${key}/${next.metadata.name}`)
      this.record(type, ns, { rv, type: 'DELETED', key, object: clone(next), prev: clone(cur) })
      this.collectGarbage(next.metadata.uid)
    } else {
      this.objects.set(`${key}/${next.metadata.name}`, next)
      this.record(type, ns, { rv, type: 'MODIFIED', key, object: clone(next), prev: clone(cur) })
      if (!isDeepStrictEqual(cur.metadata.ownerReferences, next.metadata.ownerReferences)) this.collectGarbage()
    }
    return clone(next)
  }

  private removeObject(type: ResourceType, ns: string, cur: Obj, collect = true): void {
    const key = `${type.plural}/${ns}`
    this.objects.delete(`${key}/${cur.metadata.name}`)
    const rv = ++this.rv
    const gone = clone(cur)
    gone.metadata.resourceVersion = String(rv)
    this.record(type, ns, { rv, type: 'DELETED', key, object: gone, prev: clone(cur) })
    if (collect) this.collectGarbage(cur.metadata.uid)
  }

  /**
   * The garbage collector: an owner reference is live only if an object of that kind and
   * name exists *with that uid* (the real collector looks owners up by name, so a wrong
   * name makes a dependent look orphaned). Dependents whose owners are all gone are
   * deleted (background cascading deletion). Synchronous here, asynchronous in Kubernetes.
   */
  private collectGarbage(_changedUid?: string): void {
    for (let again = true; again; ) {
      again = false
      for (const [key, o] of [...this.objects]) {
        const owners: Obj[] = o.metadata.ownerReferences ?? []
        if (!owners.length || owners.some((r) => this.ownerLive(key.split('/')[1], r))) continue
        const [plural, ns] = key.split('/')
        const type = this.type(plural)
        if (o.metadata.finalizers?.length) {
          if (!o.metadata.deletionTimestamp) this.commit(type, ns, o, { ...clone(o), metadata: { ...clone(o.metadata), deletionTimestamp: now() } })
        } else if (this.objects.has(key)) {
          this.removeObject(type, ns, o, false)
          again = true
        }
      }
    }
  }

  private ownerLive(ns: string, ref: Obj): boolean {
    const type = this.types.find((t) => t.kind === ref.kind && (t.group ? `${t.group}/${t.version}` : t.version) === ref.apiVersion)
    if (!type) return true // a kind this server does not serve: not ours to judge
    return this.objects.get(`${type.plural}/${ns}/${ref.name}`)?.metadata.uid === ref.uid
  }

  private record(type: ResourceType, _ns: string, entry: HistoryEntry): void {
    this.history.push(entry)
    if (this.history.length > 10_000) this.compactedThrough = this.history.shift()!.rv
    for (const w of this.watchers) if (w.key === entry.key) this.offer(w, entry)
    this.emit('change', { type: entry.type, plural: type.plural, object: clone(entry.object) })
  }

  private validate(type: ResourceType, obj: Obj, _old: Obj | undefined): void {
    if (type.schema) {
      const errs = validateAndPrune(type.schema, obj)
      if (errs.length) throw new HttpError(422, 'Invalid', `${type.kind} "${obj.metadata.name}" is invalid: ${errs.join('; ')}`)
    }
    if (type.kind === 'Lease') {
      for (const f of ['acquireTime', 'renewTime']) {
        const v = obj.spec?.[f]
        if (v !== undefined && v !== null && !MICRO_TIME.test(v)) throw new HttpError(400, 'BadRequest', `Lease in version "v1" cannot be handled as a Lease: parsing time "${v}" as MicroTime`)
      }
    }
    if (type.kind === 'Secret') {
      for (const [k, v] of Object.entries<string>(obj.data ?? {})) {
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw new HttpError(400, 'BadRequest', `Secret data[${k}] is not base64`)
      }
    }
    for (const l of Object.keys(obj.metadata.labels ?? {})) {
      const v = obj.metadata.labels[l]
      if (typeof v !== 'string' || v.length > 63 || !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v)) {
        throw new HttpError(422, 'Invalid', `${type.kind} "${obj.metadata.name}" is invalid: metadata.labels: Invalid value: "${v}"`)
      }
    }
  }

  private type(plural: string): ResourceType {
    return this.types.find((t) => t.plural === plural)!
  }

  private status(code: number, reason: string, message: string) {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }
  }
}

function ok(body: unknown) {
  return { code: 200, body }
}

function notFound(type: ResourceType, name: string) {
  return new HttpError(404, 'NotFound', `${type.plural}${type.group ? `.${type.group}` : ''} "${name}" not found`)
}

function conflict(type: ResourceType, name: string) {
  return new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${type.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`)
}

function selector(s: string | undefined) {
  try {
    return parseLabelSelector(s)
  } catch {
    throw new HttpError(400, 'BadRequest', `unable to parse requirement: ${s}`)
  }
}

function parseJson(body: string): Obj {
  try {
    return JSON.parse(body || 'null') ?? {}
  } catch {
    throw new HttpError(400, 'BadRequest', 'the request body is not JSON')
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function send(res: ServerResponse, code: number, body: unknown): void {
  if (res.headersSent) return void res.end()
  res.writeHead(code, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}
