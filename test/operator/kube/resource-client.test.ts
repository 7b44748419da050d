// The Kubernetes ResourceClient over a Kubernetes-API test server at the wire: the port's
// semantics (ports/ports.ts) hold on the api-server's protocol — merge patches with the
// right content type, preconditions as 409, the status subresource, finalizers, paging,
// and watches that end exactly as the WatchHandler contract says.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { BROWSER_SESSION, GROUP, VERSION, type BrowserSession } from '../../../crds/types.ts'
import { isConflict, isGone, isNotFound, ResourceError } from '../../../ports/errors.ts'
import { checkCrdsServed } from '../../../operator/kube/discovery.ts'
import { kubeName, kubeResources } from '../../../operator/kube/index.ts'
import { kubeConfigFor } from '../../../operator/kube/kube-config.ts'
import { watchStream } from '../../../operator/kube/watch.ts'
import { KubeResourceClient } from '../../../operator/kube/resource-client.ts'
import { customObjectOps, podOps } from '../../../operator/kube/api-ops.ts'
import type { PodResource } from '../../../operator/kube/pod-spec.ts'
import type { WatchEvent } from '../../../ports/ports.ts'
import { waitFor } from '../../helpers/wait.ts'
import { newSession } from '../helpers.ts'
import { kubeConfig, NS, startApi } from './helpers.ts'

const SESSIONS_PATH = `/apis/${GROUP}/${VERSION}/namespaces/${NS}/browsersessions`

async function setup(t: Test) {
  const api = await startApi()
  t.teardown(() => api.close())
  const kc = kubeConfig(api)
  const { sessions, networks } = kubeResources(kc, NS)
  return { api, kc, sessions, networks }
}

function recordWatch() {
  const events: WatchEvent<BrowserSession>[] = []
  const closes: (Error | undefined)[] = []
  return {
    events,
    closes,
    handler: { onEvent: (e: WatchEvent<BrowserSession>) => events.push(e), onClose: (err?: Error) => closes.push(err) },
    names: () => events.map((e) => (e.type === 'BOOKMARK' ? 'BOOKMARK' : `${e.type} ${e.object.metadata.name}`)),
  }
}

t.test('discovery: the CRDs are found served with their status subresource, and their absence is named', async (t) => {
  const { kc } = await setup(t)
  t.same(await checkCrdsServed(kc), { ok: true, problems: [] })
  const bare = await startApi({ crds: false })
  t.teardown(() => bare.close())
  const missing = await checkCrdsServed(kubeConfig(bare))
  t.notOk(missing.ok)
  t.match(missing.problems[0], /nightjar\.dev\/v1 is not served: install the CRDs/)
})

t.test('ids are mapped to valid object names and back', async (t) => {
  const { api, sessions } = await setup(t)
  const id = 'nsess_4fGh7KpQ2xYz9AbCdEfGhI'
  const created = await sessions.create(newSession(id))
  t.equal(created.metadata.name, id, 'callers see the id')
  const stored = api.list('browsersessions', NS)[0]
  t.equal(stored.metadata.name, kubeName(id), 'the api-server sees a DNS-1123 name')
  t.match(stored.metadata.name, /^nsess-4fgh7kpq2xyz9abcdefghi-[0-9a-f]{8}$/)
  t.equal(stored.metadata.annotations['nightjar.dev/id'], id)
  t.not(kubeName('nsess_AbC'), kubeName('nsess_abc'), 'ids that differ only in case stay distinct')
  t.equal((await sessions.get(id))?.metadata.name, id)
  t.equal((await sessions.list()).items[0].metadata.name, id)
  const patched = await sessions.patch(id, { metadata: { annotations: null } })
  t.equal(patched.metadata.name, id, 'the id annotation survives a patch that clears annotations')
  // a raw create with the id as name is what a real api-server refuses
  const res = await fetch(`${api.url}${SESSIONS_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-sa-token' },
    body: JSON.stringify({ apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', metadata: { name: id }, spec: newSession(id).spec }),
  })
  t.equal(res.status, 422)
})

t.test('get, create and AlreadyExists', async (t) => {
  const { sessions } = await setup(t)
  t.equal(await sessions.get('nsess_absent'), undefined, 'absent is undefined, not an error')
  const created = await sessions.create(newSession('nsess_a'))
  t.equal(created.apiVersion, `${GROUP}/${VERSION}`)
  t.equal(created.kind, BROWSER_SESSION.kind)
  t.equal(created.metadata.namespace, NS)
  t.equal(created.metadata.generation, 1)
  t.ok(created.metadata.uid && created.metadata.resourceVersion && created.metadata.creationTimestamp)
  t.equal(created.status, undefined, 'status is not accepted on create')
  const err = await sessions.create(newSession('nsess_a')).catch((e) => e)
  t.ok(isConflict(err), 'AlreadyExists is a 409')
  t.equal(err.reason, 'AlreadyExists')
  t.same((await sessions.get('nsess_a'))?.spec, created.spec)
})

t.test('patch is a JSON merge patch: content type, generation, no-op, null deletes', async (t) => {
  const { api, sessions } = await setup(t)
  const a = await sessions.create(newSession('nsess_a'))
  const labelled = await sessions.patch('nsess_a', { metadata: { labels: { extra: 'x' } } })
  t.equal(labelled.metadata.generation, 1, 'metadata changes leave generation alone')
  const patched = await sessions.patch('nsess_a', { spec: { desiredState: 'Ended' }, metadata: { labels: { extra: null } } })
  t.equal(patched.spec.desiredState, 'Ended')
  t.equal(patched.metadata.generation, 2, 'a spec change bumps generation')
  t.notOk('extra' in (patched.metadata.labels ?? {}), 'null deletes a label')
  t.equal(patched.spec.orgId, a.spec.orgId, 'untouched fields stay')
  const again = await sessions.patch('nsess_a', { spec: { desiredState: 'Ended' } })
  t.equal(again.metadata.resourceVersion, patched.metadata.resourceVersion, 'a patch that changes nothing is not a write')
  const patches = api.requests.filter((r) => r.method === 'PATCH')
  t.ok(patches.length >= 3)
  t.ok(patches.every((r) => r.contentType === 'application/merge-patch+json'), 'every patch is sent as application/merge-patch+json')

  // and the server really checks it: other patch types are refused, as on a real api-server
  for (const type of ['application/json-patch+json', 'application/strategic-merge-patch+json', 'application/json']) {
    const res = await fetch(`${api.url}${SESSIONS_PATH}/${kubeName('nsess_a')}`, {
      method: 'PATCH',
      headers: { 'content-type': type, authorization: 'Bearer test-sa-token' },
      body: JSON.stringify({ spec: { url: 'x' } }),
    })
    t.equal(res.status, 415, `${type} → 415`)
  }
})

t.test('resourceVersion preconditions give ConflictError (409)', async (t) => {
  const { sessions } = await setup(t)
  const a = await sessions.create(newSession('nsess_a'))
  await sessions.patch('nsess_a', { metadata: { labels: { x: '1' } } }, { resourceVersion: a.metadata.resourceVersion })
  const stale = await sessions.patch('nsess_a', { metadata: { labels: { x: '2' } } }, { resourceVersion: a.metadata.resourceVersion }).catch((e) => e)
  t.ok(isConflict(stale), 'patch with a stale version')
  t.equal(stale.reason, 'Conflict')
  const status = await sessions.patchStatus('nsess_a', { phase: 'Pending' }, { resourceVersion: a.metadata.resourceVersion }).catch((e) => e)
  t.ok(isConflict(status), 'status patch with a stale version')
  const del = await sessions.delete('nsess_a', { resourceVersion: a.metadata.resourceVersion }).catch((e) => e)
  t.ok(isConflict(del), 'delete with a stale version')
  t.equal((await sessions.get('nsess_a'))?.metadata.labels?.x, '1', 'the losing writes changed nothing')
})

t.test('status goes through the status subresource and never bumps generation', async (t) => {
  const { api, sessions } = await setup(t)
  const a = await sessions.create(newSession('nsess_a'))
  const s = await sessions.patchStatus('nsess_a', { phase: 'Pending', podName: 'p' }, { resourceVersion: a.metadata.resourceVersion })
  t.equal(s.status?.phase, 'Pending')
  t.equal(s.metadata.generation, 1)
  t.ok(api.requests.some((r) => r.method === 'PATCH' && r.path === `${SESSIONS_PATH}/${kubeName('nsess_a')}/status`), 'written to /status')
  const cleared = await sessions.patchStatus('nsess_a', { podName: null })
  t.notOk('podName' in (cleared.status ?? {}), 'null deletes a status field')
  // the main resource ignores status, as the status subresource requires
  const res = await fetch(`${api.url}${SESSIONS_PATH}/${kubeName('nsess_a')}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json', authorization: 'Bearer test-sa-token' },
    body: JSON.stringify({ status: { phase: 'Live' } }),
  })
  t.equal(res.status, 200)
  t.equal((await sessions.get('nsess_a'))?.status?.phase, 'Pending')
})

t.test('invalid objects are refused with InvalidError (422), unknown fields pruned', async (t) => {
  const { sessions } = await setup(t)
  const bad = await sessions.create(newSession('nsess_bad', { browserKind: 'netscape' as never })).catch((e) => e)
  t.equal(bad.code, 422)
  t.match(bad.message, /browserKind/)
  await sessions.create(newSession('nsess_a'))
  const pruned = await sessions.patch('nsess_a', { spec: { bogusField: 1 } as never })
  t.notOk('bogusField' in pruned.spec, 'a field the schema does not know is pruned')
  const badStatus = await sessions.patchStatus('nsess_a', { phase: 'Flying' as never }).catch((e) => e)
  t.equal(badStatus.code, 422)
})

t.test('deletion: finalizers hold the object until removed; absent is NotFoundError', async (t) => {
  const { sessions } = await setup(t)
  await sessions.create({ ...newSession('nsess_f'), metadata: { name: 'nsess_f', finalizers: ['nightjar.dev/test'] } })
  await sessions.delete('nsess_f')
  const deleting = await sessions.get('nsess_f')
  t.ok(deleting?.metadata.deletionTimestamp, 'deletionTimestamp set while a finalizer remains')
  const refused = await sessions.patch('nsess_f', { metadata: { finalizers: ['nightjar.dev/test', 'another'] } }).catch((e) => e)
  t.equal(refused.code, 422, 'no new finalizer on a deleting object')
  await sessions.patch('nsess_f', { metadata: { finalizers: null } })
  t.equal(await sessions.get('nsess_f'), undefined, 'removing the last finalizer removes it')
  const gone = await sessions.delete('nsess_f').catch((e) => e)
  t.ok(isNotFound(gone))
})

t.test('list pages through limit/continue and filters by label', async (t) => {
  const { kc, api } = await setup(t)
  const small = new KubeResourceClient<BrowserSession>({ kc, pageSize: 2, mapNames: true, ops: customObjectOps(kc, { group: GROUP, version: VERSION, plural: 'browsersessions', kind: 'BrowserSession', namespace: NS }) })
  for (const n of ['a', 'b', 'c', 'd', 'e']) {
    await small.create({ ...newSession(`nsess_${n}`), metadata: { name: `nsess_${n}`, labels: { 'nightjar.dev/org': n === 'c' ? 'norg_other' : 'norg_test' } } })
  }
  const all = await small.list()
  t.same(all.items.map((o) => o.metadata.name), ['nsess_a', 'nsess_b', 'nsess_c', 'nsess_d', 'nsess_e'])
  t.ok(all.items.every((o) => o.kind === 'BrowserSession' && o.apiVersion === `${GROUP}/${VERSION}`))
  t.equal(api.requests.filter((r) => r.method === 'GET' && r.path === SESSIONS_PATH && r.query.limit === '2').length, 3, 'three pages of two')
  t.equal(all.resourceVersion, api.resourceVersion)
  const other = await small.list({ labelSelector: 'nightjar.dev/org=norg_other' })
  t.same(other.items.map((o) => o.metadata.name), ['nsess_c'])
})

t.test('[ISSUE-49] pods page through limit/continue too (client-node hands their list\'s continue token on as _continue)', async (t) => {
  const { kc, api } = await setup(t)
  const pods = new KubeResourceClient<PodResource>({ kc, pageSize: 2, ops: podOps(kc, NS) })
  for (const n of ['a', 'b', 'c', 'd', 'e']) {
    api.add('pods', NS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${n}`, namespace: NS, labels: { app: n === 'c' ? 'other' : 'browser' }, managedFields: [{ manager: 'kubelet', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } }] }, spec: { containers: [{ name: 'c', image: 'x' }] } })
  }
  t.ok(api.list('pods', NS).every((p) => p.metadata.managedFields?.length === 1), 'the server holds managedFields')
  const all = await pods.list()
  t.ok(all.items.every((p) => !('managedFields' in p.metadata)), 'managedFields are not kept (nothing reads them; an informer caches every object)')
  t.notOk('managedFields' in ((await pods.get('pod-a'))?.metadata ?? {}), 'nor on a get')
  t.same(all.items.map((o) => o.metadata.name), ['pod-a', 'pod-b', 'pod-c', 'pod-d', 'pod-e'], 'every page read (an informer that read only the first page missed all but 500 of 10,000 pods)')
  t.equal(api.requests.filter((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}/pods` && r.query.limit === '2').length, 3, 'three pages of two')
  t.same((await pods.list({ labelSelector: 'app=browser' })).items.map((o) => o.metadata.name), ['pod-a', 'pod-b', 'pod-d', 'pod-e'])
})

t.test('[ISSUE-49] a narrow list as fresh as the client\'s own writes asks for its last write\'s version, unpaged (the watch cache answers it, not etcd)', async (t) => {
  const { kc, api } = await setup(t)
  const client = new KubeResourceClient<BrowserSession>({ kc, pageSize: 2, mapNames: true, ops: customObjectOps(kc, { group: GROUP, version: VERSION, plural: 'browsersessions', kind: 'BrowserSession', namespace: NS }) })
  const lists = () => api.requests.filter((r) => r.method === 'GET' && r.path === SESSIONS_PATH && r.query.watch === undefined)
  await client.list({ labelSelector: 'nightjar.dev/org=norg_a', fresherThanOwnWrites: true })
  t.equal(lists().at(-1)?.query.limit, '2', 'before a write of its own it reads as usual (paged, from etcd on a real server)')
  t.equal(lists().at(-1)?.query.resourceVersion, undefined)
  const first = await client.create({ ...newSession('nsess_a'), metadata: { name: 'nsess_a', labels: { 'nightjar.dev/org': 'norg_a' } } })
  const patched = await client.patch('nsess_a', { metadata: { labels: { claimed: 'yes' } } })
  t.ok(Number(patched.metadata.resourceVersion) > Number(first.metadata.resourceVersion), 'a later write has a newer version')
  const found = await client.list({ labelSelector: 'nightjar.dev/org=norg_a', fresherThanOwnWrites: true })
  t.same(found.items.map((o) => o.metadata.name), ['nsess_a'], 'it finds what it wrote')
  const q = lists().at(-1)!.query
  t.same({ resourceVersion: q.resourceVersion, resourceVersionMatch: q.resourceVersionMatch, limit: q.limit }, { resourceVersion: patched.metadata.resourceVersion, resourceVersionMatch: 'NotOlderThan', limit: undefined },
    'at least its newest write\'s version, unpaged')
})

t.test('watch: events in order, bookmarks, and each way a stream can end', async (t) => {
  const { api, sessions } = await setup(t)
  await sessions.create(newSession('nsess_before'))
  const { resourceVersion } = await sessions.list()

  const w = recordWatch()
  const handle = sessions.watch(resourceVersion, w.handler, { allowBookmarks: true })
  await waitFor(() => api.openWatches('browsersessions') === 1, { what: 'watch open' })
  t.ok(api.requests.some((r) => r.query.watch === 'true' && r.query.allowWatchBookmarks === 'true' && Number(r.query.timeoutSeconds) >= 300), 'asks for bookmarks and a server-side timeout')
  await sessions.create(newSession('nsess_a'))
  await sessions.patchStatus('nsess_a', { phase: 'Pending' })
  await sessions.delete('nsess_a')
  api.bookmark()
  await waitFor(() => w.events.length === 4, { what: 'events' })
  t.same(w.names(), ['ADDED nsess_a', 'MODIFIED nsess_a', 'DELETED nsess_a', 'BOOKMARK'])
  const bm = w.events[3]
  t.equal(bm.type === 'BOOKMARK' && bm.resourceVersion, api.resourceVersion)

  // normal end (the server's timeout): onClose() without an error
  api.closeWatches()
  await waitFor(() => w.closes.length === 1, { what: 'close' })
  t.equal(w.closes[0], undefined)
  handle.stop()

  // 410 on an open stream → GoneError
  const w2 = recordWatch()
  sessions.watch(api.resourceVersion, w2.handler)
  await waitFor(() => api.openWatches('browsersessions') === 1)
  api.expireWatches()
  await waitFor(() => w2.closes.length === 1, { what: '410 close' })
  t.ok(isGone(w2.closes[0]), 'an ERROR event with 410 is a GoneError')

  // a watch from a compacted version → GoneError at once
  const old = api.resourceVersion
  await sessions.create(newSession('nsess_b'))
  api.compact()
  const w3 = recordWatch()
  sessions.watch(old, w3.handler)
  await waitFor(() => w3.closes.length === 1, { what: 'compacted close' })
  t.ok(isGone(w3.closes[0]))
  t.equal(w3.events.length, 0)

  // connection dropped mid-stream → an error (re-watch after backoff), not Gone
  const w4 = recordWatch()
  sessions.watch(api.resourceVersion, w4.handler)
  await waitFor(() => api.openWatches('browsersessions') === 1)
  api.dropWatches()
  await waitFor(() => w4.closes.length === 1, { what: 'drop close' })
  t.notOk(isGone(w4.closes[0]), 'a dropped connection is not a 410')

  // the watch request itself refused → onClose with the mapped error
  api.failNext('GET', /browsersessions\?.*watch=true/, 503)
  const w5 = recordWatch()
  sessions.watch(api.resourceVersion, w5.handler)
  await waitFor(() => w5.closes.length === 1, { what: 'refused watch' })
  t.ok(w5.closes[0] instanceof ResourceError && (w5.closes[0] as ResourceError).code === 503)

  t.equal(w.closes.length + w2.closes.length + w3.closes.length + w4.closes.length, 4, 'onClose exactly once per stream')
})

t.test('watch from "" replays the current objects as ADDED; stop() ends delivery', async (t) => {
  const { api, sessions } = await setup(t)
  await sessions.create(newSession('nsess_a'))
  await sessions.create(newSession('nsess_b'))
  const w = recordWatch()
  const h = sessions.watch('', w.handler)
  await waitFor(() => w.events.length === 2, { what: 'synthetic adds' })
  t.same(w.names(), ['ADDED nsess_a', 'ADDED nsess_b'])
  await waitFor(() => api.openWatches('browsersessions') === 1)
  h.stop()
  h.stop() // idempotent
  await waitFor(() => api.openWatches('browsersessions') === 0, { what: 'server saw the watch end' })
  await sessions.create(newSession('nsess_c'))
  // a later watch sees nsess_c, proving the write happened while the stopped one stayed silent
  const w2 = recordWatch()
  sessions.watch('0', w2.handler)
  await waitFor(() => w2.events.length === 3)
  t.equal(w.events.length, 2, 'nothing delivered after stop()')
  t.equal(w.closes.length, 0, 'no onClose after stop()')
})

t.test('a silent stream is declared dead by the idle watchdog', async (t) => {
  // a server that accepts the watch and then never sends a byte nor ends it (a dead peer)
  const hung = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }))
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => {
    hung.closeAllConnections()
    hung.close()
  })
  const kc = kubeConfigFor(`http://127.0.0.1:${(hung.address() as AddressInfo).port}`)
  const closes: (Error | undefined)[] = []
  const started = Date.now()
  watchStream({ kc, path: '/x', fromResourceVersion: '1', timeoutSeconds: 1, idleGraceMs: 200, kind: 'Thing', convert: (o) => o, handler: { onEvent: () => {}, onClose: (e) => closes.push(e) } })
  await waitFor(() => closes.length === 1, { what: 'watchdog', timeoutMs: 5000 })
  t.match(closes[0]?.message, /idle/)
  t.ok(Date.now() - started >= 1000, 'not before the server timeout plus grace')
})

t.test('a wrong token is a 401 ResourceError, not a crash', async (t) => {
  const { api } = await setup(t)
  const { sessions } = kubeResources(kubeConfig(api, 'wrong'), NS)
  const err = await sessions.list().catch((e) => e)
  t.ok(err instanceof ResourceError)
  t.equal(err.code, 401)
  t.notMatch(err.message, /wrong|Headers/, 'no credentials or headers in the message')
})
