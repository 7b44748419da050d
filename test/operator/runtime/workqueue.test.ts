import t from 'tap'
import { backoffDelay } from '../../../watch/backoff.ts'
import { Controller } from '../../../operator/runtime/controller.ts'
import { RecordingMetrics } from '../../../operator/runtime/metrics.ts'
import { WorkQueue } from '../../../operator/runtime/workqueue.ts'
import { waitFor } from '../../helpers/wait.ts'

t.test('a key queued many times is processed once', async (t) => {
  const q = new WorkQueue()
  for (let i = 0; i < 5; i++) q.add('a')
  q.add('b')
  q.add('a')
  t.equal(q.len(), 2)
  t.equal(await q.get(), 'a')
  t.equal(await q.get(), 'b')
  t.equal(q.len(), 0)
  q.shutDown()
})

t.test('a key added while being processed is re-queued once, after done()', async (t) => {
  const q = new WorkQueue()
  q.add('a')
  const key = await q.get()
  q.add('a')
  q.add('a')
  t.equal(q.len(), 0, 'not handed to another worker while in flight')
  let second: string | undefined
  const waiting = q.get().then((k) => (second = k))
  await Promise.resolve()
  t.equal(second, undefined)
  q.done(key!)
  await waiting
  t.equal(second, 'a')
  q.done('a')
  t.equal(q.len(), 0, 'exactly once')
  q.shutDown()
})

t.test('per-key exponential backoff with a cap; forget resets it', async (t) => {
  t.same([0, 1, 2, 3, 10].map((n) => backoffDelay(n, { initialMs: 5, maxMs: 100 })), [5, 10, 20, 40, 100])
  const jittered = backoffDelay(2, { initialMs: 100, maxMs: 10_000, jitter: 0.5, random: () => 1 })
  t.equal(jittered, 600)
  const q = new WorkQueue({ backoff: { initialMs: 5, maxMs: 40 } })
  const delays = [1, 2, 3, 4, 5].map(() => q.addRateLimited('a'))
  t.same(delays, [5, 10, 20, 40, 40])
  t.equal(q.numRequeues('a'), 5)
  q.forget('a')
  t.equal(q.numRequeues('a'), 0)
  t.equal(q.addRateLimited('a'), 5)
  t.equal(await q.get(), 'a', 'a rate-limited key comes back')
  q.shutDown()
})

t.test('the overall token bucket is off by default and limits when configured', async (t) => {
  const free = new WorkQueue()
  t.same([1, 2, 3].map((i) => free.addRateLimited(`k${i}`)), [5, 5, 5])
  free.shutDown()
  const limited = new WorkQueue({ rateLimit: { qps: 10, burst: 2 } })
  const d = [1, 2, 3, 4].map((i) => limited.addRateLimited(`k${i}`))
  t.same(d.slice(0, 2), [5, 5], 'burst passes')
  t.ok(d[2] >= 90 && d[3] >= 190, `then qps applies (${d[2]}, ${d[3]})`)
  limited.shutDown()
})

t.test('addAfter keeps the earliest time; shutDown releases waiting workers', async (t) => {
  const q = new WorkQueue()
  q.addAfter('a', 60_000)
  q.addAfter('a', 1)
  t.equal(await q.get(), 'a')
  const pending = q.get()
  q.shutDown()
  t.equal(await pending, undefined)
  q.add('b')
  t.equal(q.len(), 0, 'no adds after shutdown')
})

t.test('controller: bounded concurrency, one key never in two workers, failures retried', async (t) => {
  const metrics = new RecordingMetrics()
  let running = 0
  let maxRunning = 0
  const perKey = new Map<string, number>()
  let failuresLeft = 2
  const release: (() => void)[] = []
  let blocking = true
  const ctl = new Controller({
    name: 'test',
    concurrency: 2,
    metrics,
    queue: { backoff: { initialMs: 1, maxMs: 5 } },
    reconciler: {
      async reconcile(key) {
        running++
        maxRunning = Math.max(maxRunning, running)
        perKey.set(key, (perKey.get(key) ?? 0) + 1)
        try {
          if (key === 'flaky' && failuresLeft-- > 0) throw new Error('boom')
          if (key.startsWith('slow') && blocking) await new Promise<void>((r) => release.push(r))
        } finally {
          running--
        }
      },
    },
  })
  ctl.start()
  for (const k of ['slow1', 'slow2', 'slow3']) ctl.enqueue(k)
  await waitFor(() => release.length === 2, { what: 'two slow reconciles in flight' })
  t.equal(maxRunning, 2, 'concurrency bound holds')
  ctl.enqueue('slow1') // in flight: must wait, then run once more
  release.splice(0).forEach((r) => r())
  await waitFor(() => perKey.get('slow1') === 2 && perKey.get('slow3') === 1, { what: 'slow1 again (once) and slow3' })
  blocking = false
  release.splice(0).forEach((r) => r())
  ctl.enqueue('flaky')
  await waitFor(() => metrics.totals.get('test/success') && perKey.get('flaky') === 3, { what: 'flaky succeeds on the third try' })
  t.equal(metrics.errors.get('test'), 2)
  t.equal(metrics.retries.get('test'), 2)
  t.ok(metrics.durations.length >= 5)
  t.ok(maxRunning <= 2)
  t.equal(perKey.get('slow1'), 2, 're-queued once, not once per add')
  await ctl.stop()
  t.equal(metrics.depth.get('test'), 0)
})

t.test('controller stop waits for the in-flight reconcile', async (t) => {
  let finished = false
  let started!: () => void
  const began = new Promise<void>((r) => (started = r))
  let release!: () => void
  const ctl = new Controller({
    name: 'stop',
    reconciler: {
      async reconcile() {
        started()
        await new Promise<void>((r) => (release = r))
        finished = true
      },
    },
  })
  ctl.start()
  ctl.enqueue('a')
  await began
  const stopped = ctl.stop()
  release()
  await stopped
  t.ok(finished)
})
