// The embedded ResourceClient must behave like the Kubernetes api-server on the points
// the reconcilers rely on.
import t from 'tap'
import type { BrowserSession } from '../../../crds/types.ts'
import { ResourceStore, ResourceVersionClock } from '../../../operator/embedded/resource-store.ts'
import { AlreadyExistsError, ConflictError, GoneError, InvalidError, NotFoundError } from '../../../ports/errors.ts'
import type { WatchEvent } from '../../../ports/ports.ts'
import { waitFor } from '../../helpers/wait.ts'
import { newSession } from '../helpers.ts'

const store = (opts: { historyLimit?: number; clock?: ResourceVersionClock; bookmarkIntervalMs?: number } = {}) =>
  new ResourceStore<BrowserSession>({ apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', namespace: 'ns', ...opts })

function collect(s: ResourceStore<BrowserSession>, from: string, opts = {}) {
  const events: WatchEvent<BrowserSession>[] = []
  const closed: (Error | undefined)[] = []
  const handle = s.watch(from, { onEvent: (e) => events.push(e), onClose: (err) => closed.push(err) }, opts)
  return { events, closed, handle }
}

const rv = (o: { metadata: { resourceVersion: string } }) => Number(o.metadata.resourceVersion)

t.test('create fills server fields, drops status, rejects a taken name', async (t) => {
  const s = store()
  const input = { ...newSession('nsess_a'), status: { phase: 'Live' } } as never
  const a = await s.create(input)
  t.equal(a.apiVersion, 'nightjar.dev/v1')
  t.equal(a.kind, 'BrowserSession')
  t.equal(a.metadata.namespace, 'ns')
  t.equal(a.metadata.generation, 1)
  t.match(a.metadata.uid, /^[0-9a-f-]{36}$/)
  t.match(a.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  t.equal(a.status, undefined, 'status subresource: status is not settable on create')
  await t.rejects(s.create(newSession('nsess_a')), AlreadyExistsError)
  const err = await s.create(newSession('nsess_a')).catch((e: unknown) => e)
  t.ok(err instanceof ConflictError && err.code === 409 && err.reason === 'AlreadyExists', 'AlreadyExists is a 409 Conflict')
  t.equal(await s.get('nsess_missing'), undefined)
})

t.test('resourceVersion increases on every write and is shared through a clock', async (t) => {
  const clock = new ResourceVersionClock()
  const s1 = store({ clock })
  const s2 = store({ clock })
  const a = await s1.create(newSession('nsess_a'))
  const b = await s2.create(newSession('nsess_b'))
  const a2 = await s1.patch('nsess_a', { metadata: { labels: { x: '1' } } })
  const a3 = await s1.patchStatus('nsess_a', { phase: 'Pending' })
  t.ok(rv(a) < rv(b) && rv(b) < rv(a2) && rv(a2) < rv(a3))
  const list = await s1.list()
  t.equal(list.resourceVersion, String(clock.current()))
})

t.test('generation moves only with spec; status writes and no-ops do not', async (t) => {
  const s = store()
  const a = await s.create(newSession('nsess_a'))
  const labelled = await s.patch('nsess_a', { metadata: { labels: { k: 'v' } } })
  t.equal(labelled.metadata.generation, 1, 'metadata change keeps generation')
  const st = await s.patchStatus('nsess_a', { phase: 'Live', endpoint: 'http://127.0.0.1:1' })
  t.equal(st.metadata.generation, 1, 'status write keeps generation')
  t.equal(st.spec.desiredState, 'Live')
  const ended = await s.patch('nsess_a', { spec: { desiredState: 'Ended' }, status: { phase: 'Failed' } } as never)
  t.equal(ended.metadata.generation, 2, 'spec change bumps generation')
  t.equal(ended.status?.phase, 'Live', 'status in a main-resource patch is ignored')
  const same = await s.patch('nsess_a', { spec: { desiredState: 'Ended' } })
  t.equal(same.metadata.resourceVersion, ended.metadata.resourceVersion, 'a no-op patch is not a write')
  const sameStatus = await s.patchStatus('nsess_a', { phase: 'Live' })
  t.equal(sameStatus.metadata.resourceVersion, ended.metadata.resourceVersion, 'a no-op status patch is not a write')
  const cleared = await s.patchStatus('nsess_a', { endpoint: null })
  t.equal(cleared.status?.endpoint, undefined, 'null deletes (merge patch)')
  t.equal(cleared.metadata.uid, a.metadata.uid)
})

t.test('a stale resourceVersion precondition gets 409', async (t) => {
  const s = store()
  const a = await s.create(newSession('nsess_a'))
  await s.patchStatus('nsess_a', { phase: 'Pending' }, { resourceVersion: a.metadata.resourceVersion })
  await t.rejects(s.patchStatus('nsess_a', { phase: 'Live' }, { resourceVersion: a.metadata.resourceVersion }), ConflictError)
  await t.rejects(s.patch('nsess_a', { spec: { url: 'https://x' } }, { resourceVersion: a.metadata.resourceVersion }), ConflictError)
  await t.rejects(s.delete('nsess_a', { resourceVersion: a.metadata.resourceVersion }), ConflictError)
  await t.rejects(s.patch('nsess_nope', { spec: {} }), NotFoundError)
  await t.rejects(s.delete('nsess_nope'), NotFoundError)
})

t.test('returned objects are copies', async (t) => {
  const s = store()
  const a = await s.create(newSession('nsess_a'))
  a.spec.declaredHosts.push('evil.example')
  const got = (await s.get('nsess_a'))!
  t.same(got.spec.declaredHosts, [])
  got.spec.declaredHosts.push('evil.example')
  t.same((await s.get('nsess_a'))!.spec.declaredHosts, [])
})

t.test('finalizers: delete sets deletionTimestamp; removal waits for the last finalizer', async (t) => {
  const s = store()
  await s.create({ ...newSession('nsess_a'), metadata: { name: 'nsess_a', finalizers: ['nightjar.dev/a', 'nightjar.dev/b'] } })
  const w = collect(s, (await s.list()).resourceVersion)
  await s.delete('nsess_a')
  const deleting = (await s.get('nsess_a'))!
  t.ok(deleting.metadata.deletionTimestamp, 'deletionTimestamp set')
  t.equal(deleting.metadata.generation, 2, 'deletion bumps generation like the api-server')
  await s.delete('nsess_a') // idempotent while terminating
  await t.rejects(s.patch('nsess_a', { metadata: { finalizers: ['nightjar.dev/a', 'nightjar.dev/b', 'nightjar.dev/c'] } }), InvalidError)
  await s.patch('nsess_a', { metadata: { finalizers: ['nightjar.dev/b'] } })
  t.ok(await s.get('nsess_a'), 'still there with one finalizer')
  await s.patch('nsess_a', { metadata: { finalizers: [] } })
  t.equal(await s.get('nsess_a'), undefined, 'gone once finalizers are empty')
  await waitFor(() => w.events.length === 3, { what: 'three events' })
  t.same(w.events.map((e) => e.type), ['MODIFIED', 'MODIFIED', 'DELETED'])
  w.handle.stop()
  // without finalizers delete is immediate
  await s.create(newSession('nsess_b'))
  await s.delete('nsess_b')
  t.equal(await s.get('nsess_b'), undefined)
})

t.test('watch events arrive asynchronously, in order, with selector semantics', async (t) => {
  const s = store()
  const from = (await s.list()).resourceVersion
  const all = collect(s, from)
  const org = collect(s, from, { labelSelector: 'nightjar.dev/org=norg_test,tier in (gold)' })
  await s.create({ metadata: { name: 'nsess_a', labels: { 'nightjar.dev/org': 'norg_test' } }, spec: newSession('x').spec })
  t.equal(all.events.length, 0, 'not delivered synchronously')
  await s.patch('nsess_a', { metadata: { labels: { tier: 'gold' } } })
  await s.patchStatus('nsess_a', { phase: 'Pending' })
  await s.patch('nsess_a', { metadata: { labels: { tier: null } } })
  await s.delete('nsess_a')
  await waitFor(() => all.events.length === 5, { what: 'five events' })
  t.same(all.events.map((e) => e.type), ['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'])
  const versions = all.events.map((e) => (e.type === 'BOOKMARK' ? 0 : rv(e.object)))
  t.same(versions, [...versions].sort((a, b) => a - b), 'resourceVersion order')
  await waitFor(() => org.events.length === 3, { what: 'selector events' })
  t.same(org.events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED'], 'entering/leaving the selector is ADDED/DELETED')
  all.handle.stop()
  org.handle.stop()
  t.equal(s.openWatches, 0)
})

t.test('watch resumes from a resourceVersion; "0" replays the current state', async (t) => {
  const s = store()
  const a = await s.create(newSession('nsess_a'))
  await s.create(newSession('nsess_b'))
  const resumed = collect(s, a.metadata.resourceVersion)
  const fresh = collect(s, '0')
  await waitFor(() => resumed.events.length === 1 && fresh.events.length === 2)
  t.same(resumed.events.map((e) => e.type !== 'BOOKMARK' && e.object.metadata.name), ['nsess_b'])
  t.same(fresh.events.map((e) => e.type), ['ADDED', 'ADDED'])
  resumed.handle.stop()
  fresh.handle.stop()
})

t.test('a watch from a compacted resourceVersion gets 410 Gone', async (t) => {
  const s = store({ historyLimit: 3 })
  const first = await s.create(newSession('nsess_a'))
  for (let i = 0; i < 5; i++) await s.patchStatus('nsess_a', { podName: `p${i}` })
  const w = collect(s, first.metadata.resourceVersion)
  await waitFor(() => w.closed.length === 1, { what: 'close' })
  t.ok(w.closed[0] instanceof GoneError)
  t.equal((w.closed[0] as GoneError).code, 410)
  t.equal(w.events.length, 0)
  // the newest retained history still serves a watch
  const current = (await s.get('nsess_a'))!
  const ok = collect(s, String(rv(current) - 2))
  await waitFor(() => ok.events.length === 2, { what: 'replayed events' })
  t.equal(ok.closed.length, 0)
  ok.handle.stop()
})

t.test('bookmarks advance a quiet watch; a server-side close reaches onClose after pending events', async (t) => {
  const s = store({ bookmarkIntervalMs: 10 })
  await s.create(newSession('nsess_a'))
  const w = collect(s, (await s.list()).resourceVersion, { allowBookmarks: true })
  await waitFor(() => w.events.some((e) => e.type === 'BOOKMARK'), { what: 'bookmark' })
  await s.patchStatus('nsess_a', { phase: 'Pending' })
  s.disconnectWatches()
  await waitFor(() => w.closed.length === 1, { what: 'close' })
  t.ok(w.events.some((e) => e.type === 'MODIFIED'), 'the event written before the close was delivered first')
  t.equal(w.closed[0], undefined, 'a normal close carries no error')
})
