// Daemon counts reach the Network resource in a cluster: the api-server publishes them as
// an annotation (coalesced, skipped when unchanged, healed by a refresh) and the operator's
// DaemonCounts reads them back. Against the in-process resource store, which keeps the
// Kubernetes semantics (resourceVersion, merge patch).
import t from 'tap'
import { createEmbeddedResources } from '../../../operator/embedded/index.ts'
import { annotationDaemonCounts } from '../../../operator/kube/annotation-counts.ts'
import { DaemonCountPublisher } from '../../../api-server/networks/count-publisher.ts'
import { DaemonChanges } from '../../../api-server/networks/counts.ts'
import { ANNOTATIONS, LABELS, type DaemonCountsValue } from '../../../crds/types.ts'
import { waitFor } from '../../helpers/wait.ts'

const ID = 'nnet_0123456789abcdef'

t.test('the api-server publishes daemon counts on the Network; the operator reads them back', async (t) => {
  const { networks } = createEmbeddedResources()
  await networks.create({ metadata: { name: ID, labels: { [LABELS.org]: 'norg_x' } }, spec: { orgId: 'norg_x', name: 'dev', declaredHosts: [] } })
  const changes = new DaemonChanges()
  let counts: DaemonCountsValue = { daemonCount: 0, onlineDaemonCount: 0 }
  let reads = 0
  const warnings: string[] = []
  const publisher = new DaemonCountPublisher({
    networks, changes, counts: async () => { reads++; return counts },
    log: { warn: (_o: unknown, msg?: string) => void warnings.push(String(msg)) } as never,
  })
  publisher.start()
  t.teardown(() => publisher.stop())
  const reader = annotationDaemonCounts(networks)
  t.same(await reader.counts(ID), { daemonCount: 0, onlineDaemonCount: 0 }, 'no annotation yet reads as zero')

  counts = { daemonCount: 1, onlineDaemonCount: 1 }
  changes.notify(ID)
  await waitFor(async () => (await reader.counts(ID)).onlineDaemonCount === 1, { what: 'the annotation' })
  t.same(await reader.counts(ID), { daemonCount: 1, onlineDaemonCount: 1 }, 'a change is published and read back')

  const before = (await networks.get(ID))!.metadata.resourceVersion
  await publisher.publish(ID)
  t.equal((await networks.get(ID))!.metadata.resourceVersion, before, 'unchanged counts write nothing')

  // a burst of changes coalesces: the last counts win, in at most two writes
  counts = { daemonCount: 3, onlineDaemonCount: 2 }
  reads = 0
  await Promise.all(Array.from({ length: 10 }, () => publisher.publish(ID)))
  await waitFor(async () => (await reader.counts(ID)).daemonCount === 3, { what: 'the last counts' })
  t.ok(reads <= 2, `ten changes at once cost ${reads} reads`)

  // someone else rewrote the annotation: the periodic refresh puts the truth back
  await networks.patch(ID, { metadata: { annotations: { [ANNOTATIONS.daemonCounts]: '{"daemonCount":9,"onlineDaemonCount":9}' } } })
  await publisher.refresh()
  t.same(await reader.counts(ID), { daemonCount: 3, onlineDaemonCount: 2 }, 'a refresh heals a stale annotation')

  await publisher.publish('nnet_absent')
  t.same(warnings, [], 'a network without its resource is skipped quietly')
  t.same(await reader.counts('nnet_absent'), { daemonCount: 0, onlineDaemonCount: 0 }, 'and reads as zero')
})
