import t from 'tap'
import type { Network } from '../../../crds/types.ts'
import { NetworkReconciler } from '../../../operator/controllers/network/reconciler.ts'
import { createEmbeddedResources, EmbeddedPodRuntime, startEmbeddedOperator } from '../../../operator/embedded/index.ts'
import { waitFor } from '../../helpers/wait.ts'
import { countingClient, fakePodCommand, ManualDaemonCounts, newNetwork } from '../helpers.ts'

const ready = (n: Network | undefined) => n?.status?.conditions?.find((c) => c.type === 'Ready')

t.test('network status follows the daemon counts', async (t) => {
  const { sessions, networks } = createEmbeddedResources()
  const pods = new EmbeddedPodRuntime({ command: fakePodCommand(), poolSize: 0 })
  const counts = new ManualDaemonCounts()
  const operator = await startEmbeddedOperator({ sessions, networks, pods, daemonCounts: counts })
  t.teardown(async () => {
    await operator.stop()
    await pods.shutdown()
  })
  await networks.create(newNetwork('nnet_a', ['localhost:3000']))
  const fresh = await waitFor(async () => {
    const n = await networks.get('nnet_a')
    return n?.status ? n : undefined
  }, { what: 'initial status' })
  t.equal(fresh.status!.daemonCount, 0)
  t.equal(fresh.status!.onlineDaemonCount, 0)
  t.equal(ready(fresh)?.status, 'False')
  t.equal(ready(fresh)?.reason, 'NoDaemonOnline')

  counts.set('nnet_a', 2, 1)
  const online = await waitFor(async () => {
    const n = await networks.get('nnet_a')
    return n?.status?.onlineDaemonCount === 1 ? n : undefined
  }, { what: 'online daemon' })
  t.equal(online.status!.daemonCount, 2)
  t.equal(ready(online)?.status, 'True')
  t.equal(ready(online)?.reason, 'DaemonOnline')
  t.equal(ready(online)?.observedGeneration, 1)

  await networks.patch('nnet_a', { spec: { declaredHosts: ['localhost:3000', '127.0.0.1'] } })
  await waitFor(async () => ready(await networks.get('nnet_a'))?.observedGeneration === 2, { what: 'generation observed' })
  t.equal(ready(await networks.get('nnet_a'))?.lastTransitionTime, ready(online)?.lastTransitionTime, 'no transition without a status flip')
})

t.test('a settled network is not rewritten', async (t) => {
  const { networks: store } = createEmbeddedResources()
  const networks = countingClient(store)
  const counts = new ManualDaemonCounts()
  counts.set('nnet_b', 1, 1)
  const r = new NetworkReconciler({ networks, daemonCounts: counts })
  await store.create(newNetwork('nnet_b'))
  await r.reconcile('nnet_b')
  await r.reconcile('nnet_b')
  await r.reconcile('nnet_b')
  t.same(networks.writes, ['patchStatus nnet_b'])
  await r.reconcile('nnet_missing') // absent: nothing to do, no error
  t.equal(networks.writes.length, 1)
})
