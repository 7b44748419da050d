import t from 'tap'
import type { BrowserSession } from '../../crds/types.ts'
import { ResourceStore } from '../../operator/embedded/resource-store.ts'
import { Informer } from '../../watch/informer.ts'
import { waitFor } from '../helpers/wait.ts'
import { newSession } from '../operator/helpers.ts'

const mk = (historyLimit = 1000) => new ResourceStore<BrowserSession>({ apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', historyLimit })
const fast = { backoff: { initialMs: 1, maxMs: 20, jitter: 0.5 } }

function recorder() {
  const log: string[] = []
  return {
    log,
    handlers: {
      onAdd: (o: BrowserSession) => log.push(`add ${o.metadata.name}`),
      onUpdate: (a: BrowserSession, b: BrowserSession) => log.push(`${a === b ? 'resync' : 'update'} ${b.metadata.name}`),
      onDelete: (o: BrowserSession) => log.push(`delete ${o.metadata.name}`),
    },
  }
}

t.test('lists, then watches into a cache', async (t) => {
  const s = mk()
  await s.create(newSession('nsess_a'))
  const inf = new Informer(s, fast)
  const r = recorder()
  inf.addHandler(r.handlers)
  await inf.start()
  t.ok(inf.hasSynced)
  t.same(r.log, ['add nsess_a'])
  await s.create(newSession('nsess_b'))
  await s.patchStatus('nsess_a', { phase: 'Pending' })
  await s.delete('nsess_b')
  await waitFor(() => r.log.length === 4, { what: 'watch events' })
  t.same(r.log, ['add nsess_a', 'add nsess_b', 'update nsess_a', 'delete nsess_b'])
  t.equal(inf.get('nsess_a')?.status?.phase, 'Pending')
  t.equal(inf.get('nsess_b'), undefined)
  inf.stop()
})

t.test('relists on 410 Gone and reports what changed while it was blind', async (t) => {
  const s = mk()
  await s.create(newSession('nsess_a'))
  await s.create(newSession('nsess_gone'))
  const inf = new Informer(s, fast)
  const r = recorder()
  inf.addHandler(r.handlers)
  await inf.start()
  await waitFor(() => s.openWatches === 1, { what: 'watch open' })
  // the watch breaks; while it is down, writes happen and history is compacted
  s.disconnectWatches(new Error('connection reset'))
  await s.delete('nsess_gone')
  await s.create(newSession('nsess_new'))
  await s.patchStatus('nsess_a', { phase: 'Live' })
  s.compact()
  const relistsBefore = inf.relists
  await waitFor(() => inf.relists > relistsBefore, { what: 'relist after Gone' })
  await waitFor(() => inf.get('nsess_new') && !inf.get('nsess_gone') && inf.get('nsess_a')?.status?.phase === 'Live', { what: 'cache caught up' })
  t.ok(r.log.includes('delete nsess_gone'), 'a delete missed during the outage is still reported')
  t.ok(r.log.includes('add nsess_new'))
  t.ok(r.log.includes('update nsess_a'))
  // and it keeps watching after the relist
  await s.create(newSession('nsess_later'))
  await waitFor(() => inf.get('nsess_later'), { what: 'watch resumed' })
  inf.stop()
})

t.test('a normal close re-watches from the last version without relisting', async (t) => {
  const s = mk()
  const inf = new Informer(s, fast)
  await inf.start()
  await waitFor(() => s.openWatches === 1)
  s.disconnectWatches()
  await s.create(newSession('nsess_a'))
  await waitFor(() => inf.get('nsess_a'), { what: 'event after reconnect' })
  t.equal(inf.relists, 1, 'resumed from its resourceVersion, no relist')
  inf.stop()
  t.equal(s.openWatches, 0, 'stop closes the watch')
})

t.test('list failures are retried; resync re-delivers every object', async (t) => {
  const s = mk()
  await s.create(newSession('nsess_a'))
  let failures = 2
  const flaky = Object.create(s) as typeof s
  flaky.list = async (o) => {
    if (failures-- > 0) throw new Error('api-server unavailable')
    return s.list(o)
  }
  const inf = new Informer(flaky, { ...fast, resyncMs: 15 })
  const r = recorder()
  inf.addHandler(r.handlers)
  await inf.start()
  t.equal(failures, -1, 'started after two failed lists')
  await waitFor(() => r.log.filter((l) => l === 'resync nsess_a').length >= 2, { what: 'resyncs' })
  inf.stop()
})

t.test('list(select) copies only the objects it keeps; a copy changed leaves the cache as it was; peek and names read the cache', async (t) => {
  const s = mk()
  for (const id of ['nsess_a', 'nsess_b', 'nsess_c']) await s.create(newSession(id))
  await s.patchStatus('nsess_b', { phase: 'Pending' })
  const inf = new Informer(s, fast)
  await inf.start()
  const seen: string[] = []
  const kept = inf.list((o) => { seen.push(o.metadata.name); return o.status?.phase === 'Pending' })
  t.same(seen.sort(), ['nsess_a', 'nsess_b', 'nsess_c'], 'select sees every cached object')
  t.same(kept.map((o) => o.metadata.name), ['nsess_b'], 'only the selected are returned')
  kept[0]!.status!.phase = 'Live'
  t.equal(inf.peek('nsess_b')?.status?.phase, 'Pending', 'the returned object is a copy')
  t.equal(inf.list().length, 3, 'no select: every object')
  t.same(inf.names().sort(), ['nsess_a', 'nsess_b', 'nsess_c'])
  t.equal(inf.peek('nsess_z'), undefined)
  inf.stop()
})
