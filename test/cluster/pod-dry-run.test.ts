// The browser pods the operator writes go through a real kube-apiserver's server-side dry-run
// (validation the Pod schema alone does not carry): the scale bench found, with 7,500
// sessions live on a simulated fleet, that a pod avoiding two suspect nodes was refused —
// a metadata.name field requirement may hold one value only — and every start retried it
// until the operator ran out of heap. Here: no node avoided, one, several, beside a
// configured affinity of several terms.
import t from 'tap'
import { stringify } from 'yaml'
import { browserPodManifest } from '../../operator/kube/pod-spec.ts'
import { kubectl, testNamespace } from './helpers.ts'

const affinity = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'pool', operator: 'In', values: ['browsers'] }] },
        { matchExpressions: [{ key: 'pool', operator: 'In', values: ['spare'] }] },
      ],
    },
  },
}

t.test('[ISSUE-49] a browser pod that avoids lost nodes is one the API server accepts, however many nodes it avoids', async (t) => {
  const ns = await testNamespace(t, 'njpod')
  const cases: Array<[string, string[], Record<string, unknown> | undefined]> = [
    ['none avoided', [], undefined],
    ['one avoided', ['sim-001'], undefined],
    ['three avoided', ['sim-003', 'sim-001', 'sim-002'], undefined],
    ['three avoided, two configured terms', ['sim-003', 'sim-001', 'sim-002'], affinity],
  ]
  for (const [label, avoidNodes, withAffinity] of cases) {
    const name = `nightjar-browser-dry${cases.findIndex((c) => c[0] === label)}`
    const pod = browserPodManifest(
      { name, namespace: ns, browserKind: 'chromium', tokenSecretName: `${name}-token`, launch: { sessionId: 'nsess_dry' }, avoidNodes },
      { image: 'localhost/nightjar-browser-pod:dry', affinity: withAffinity },
    )
    const answer = await kubectl(['apply', '--dry-run=server', '-o', 'name', '-f', '-'], { input: stringify(pod) })
    t.equal(answer.trim(), `pod/${name}`, `${label}: accepted`)
  }
  // and the check is not a rubber stamp: the shape the operator wrote before is refused
  const old = browserPodManifest({ name: 'nightjar-browser-dryold', namespace: ns, browserKind: 'chromium', tokenSecretName: 'x-token', launch: { sessionId: 'nsess_dry' } }, { image: 'localhost/nightjar-browser-pod:dry' }) as Record<string, any>
  old.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['sim-001', 'sim-002'] }] }] } } }
  await t.rejects(kubectl(['apply', '--dry-run=server', '-o', 'name', '-f', '-'], { input: stringify(old) }), /must be only one value/, 'two names in one requirement: refused')
})
