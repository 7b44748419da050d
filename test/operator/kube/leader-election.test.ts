// Leader election on a coordination.k8s.io Lease against the Kubernetes-API test server.
// Clocks are injected: a lease "lapses" because the test moves a candidate's clock, not
// because the test sleeps; the retry period is short so ticks come quickly.
import t, { type Test } from 'tap'
import { LeaderElector } from '../../../operator/kube/leader-election.ts'
import { waitFor } from '../../helpers/wait.ts'
import { kubeConfig, startApi } from './helpers.ts'

const LEASE_NS = 'nightjar-system'

function clock(start = Date.now()) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

async function setup(t: Test) {
  const api = await startApi()
  const kc = kubeConfig(api)
  const electors: LeaderElector[] = []
  const make = (identity: string, c = clock(), timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000 }) => {
    const events: string[] = []
    const e = new LeaderElector({
      kc,
      namespace: LEASE_NS,
      name: 'nightjar-operator',
      identity,
      ...timing,
      retryPeriodMs: 20,
      now: c.now,
      onStartedLeading: () => void events.push('started'),
      onStoppedLeading: () => void events.push('stopped'),
    })
    electors.push(e)
    return { e, events, clock: c }
  }
  t.teardown(async () => {
    for (const e of electors) await e.stop({ release: false })
    await api.close()
  })
  const lease = () => api.get('leases', LEASE_NS, 'nightjar-operator')?.spec
  const renewals = () => api.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/leases/nightjar-operator')).length
  const reads = () => api.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/leases/nightjar-operator')).length
  /** wait until candidates have read the lease k more times (election rounds happened) */
  const rounds = async (k: number) => {
    const n = reads()
    await waitFor(() => reads() >= n + k, { what: `${k} election rounds` })
  }
  return { api, make, lease, renewals, rounds }
}

t.test('two replicas: exactly one leads, and keeps leading while it renews', async (t) => {
  const { make, lease, renewals } = await setup(t)
  const a = make('replica-a')
  const b = make('replica-b')
  a.e.start()
  b.e.start()
  await waitFor(() => a.e.isLeader || b.e.isLeader, { what: 'a leader' })
  const leader = a.e.isLeader ? a : b
  const follower = leader === a ? b : a
  const before = renewals()
  await waitFor(() => renewals() >= before + 5, { what: 'several renewals' })
  t.ok(leader.e.isLeader)
  t.notOk(follower.e.isLeader, 'never two leaders')
  t.same(leader.events, ['started'])
  t.same(follower.events, [])
  t.equal(lease()?.holderIdentity, leader === a ? 'replica-a' : 'replica-b')
  t.equal(follower.e.leader, lease()?.holderIdentity, 'the follower knows who leads')
  t.match(lease()?.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'MicroTime with six fractional digits')
  t.equal(lease()?.leaseDurationSeconds, 15)
})

t.test('failover: when the leader stops renewing, a follower takes over once the lease lapses on its clock', async (t) => {
  const { make, lease, rounds } = await setup(t)
  const a = make('replica-a')
  a.e.start()
  await waitFor(() => a.e.isLeader, { what: 'a leads' })
  const b = make('replica-b')
  b.e.start()
  await waitFor(() => b.e.leader === 'replica-a', { what: 'b observed a' })
  // a crashes: no renewals, no release
  await a.e.stop({ release: false })
  t.same(a.events, ['started', 'stopped'])
  t.notOk(b.e.isLeader, 'not before the lease lapses')
  b.clock.advance(14_000)
  await rounds(3)
  t.notOk(b.e.isLeader, 'still inside the lease on b’s clock: b waits')
  b.clock.advance(2_000)
  await waitFor(() => b.e.isLeader, { what: 'b takes over' })
  t.equal(lease()?.holderIdentity, 'replica-b')
  t.equal(lease()?.leaseTransitions, 1)
  t.same(b.events, ['started'])
})

t.test('graceful shutdown releases the lease: a follower takes over without waiting', async (t) => {
  const { make, lease } = await setup(t)
  const a = make('replica-a')
  a.e.start()
  await waitFor(() => a.e.isLeader)
  const b = make('replica-b')
  b.e.start()
  await waitFor(() => b.e.leader === 'replica-a')
  await a.e.stop({ release: true })
  await waitFor(() => b.e.isLeader, { what: 'b leads after the release' })
  t.equal(lease()?.holderIdentity, 'replica-b')
})

t.test('a leader that cannot renew within the renew deadline steps down', async (t) => {
  const { api, make } = await setup(t)
  const a = make('replica-a')
  a.e.start()
  await waitFor(() => a.e.isLeader)
  api.failNext('PUT', /leases\/nightjar-operator/, 500, 1_000_000)
  const failing = api.requests.length
  await waitFor(() => api.requests.length > failing + 2, { what: 'renewals failing' })
  t.ok(a.e.isLeader, 'a failed renewal alone does not end leadership')
  a.clock.advance(10_001)
  await waitFor(() => !a.e.isLeader, { what: 'stepped down' })
  t.same(a.events, ['started', 'stopped'])
  api.clearFailures()
})

t.test('a renewal that hangs is abandoned in time to step down before the lease could lapse', async (t) => {
  const { api, make } = await setup(t)
  // request deadline = renewDeadline / 2 = 500 ms
  const a = make('replica-a', clock(), { leaseDurationMs: 2000, renewDeadlineMs: 1000 })
  a.e.start()
  await waitFor(() => a.e.isLeader)
  api.failNext('PUT', /leases\/nightjar-operator/, 0, 1_000_000)
  a.clock.advance(1001)
  await waitFor(() => !a.e.isLeader, { what: 'stepped down despite a hung request', timeoutMs: 5000 })
  t.same(a.events, ['started', 'stopped'])
  api.clearFailures()
})

t.test('two candidates racing to create the lease: one create wins', async (t) => {
  const { api, make } = await setup(t)
  const cs = ['r1', 'r2', 'r3'].map((id) => make(id))
  for (const c of cs) c.e.start()
  await waitFor(() => cs.some((c) => c.e.isLeader))
  const creates = api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/leases'))
  t.ok(creates.length >= 1)
  // give every candidate several more rounds
  const n = api.requests.length
  await waitFor(() => api.requests.length > n + 15)
  t.equal(cs.filter((c) => c.e.isLeader).length, 1, 'exactly one leader')
})
