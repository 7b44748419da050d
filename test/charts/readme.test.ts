// charts/nightjar/README.md documents every chart value (cert-manager's chart README is the
// model): the table is generated from values.yaml's comments, so the two cannot drift, and a
// value added without a comment fails here instead of reaching a platform team unexplained.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { readChartReadme, renderValuesTable, valueDocs } from '../../scripts/gen-chart-readme.ts'

const VALUES = new URL('../../charts/nightjar/values.yaml', import.meta.url)

t.test('the chart README holds the values table as values.yaml writes it', async (t) => {
  t.ok(readChartReadme().includes(renderValuesTable()), 'charts/nightjar/README.md is current: run node --import tsx scripts/gen-chart-readme.ts')
})

t.test('every value has a default and a description', async (t) => {
  const docs = valueDocs()
  t.ok(docs.length >= 100, `values found (${docs.length})`)
  t.same(docs.filter((d) => !d.description).map((d) => d.path), [], 'values without a comment in values.yaml')
  // the leaves the table names are the leaves the chart has: a few the templates read
  for (const path of ['images.registry', 'apiServer.replicas', 'browserPods.resources.requests', 'browserPods.networkPolicy.denyCidrs', 'operator.leaderElection.leaseName']) {
    t.ok(docs.some((d) => d.path === path), `${path} is listed`)
  }
})

t.test('the check can fail: a value added without a comment is reported', async (t) => {
  const text = readFileSync(VALUES, 'utf8') + '\nnewThing:\n  knob: 3\n'
  const added = valueDocs(text).find((d) => d.path === 'newThing.knob')
  t.ok(added, 'the new value is read')
  t.equal(added?.description, '', 'and has no description')
  t.notOk(readChartReadme().includes(renderValuesTable(valueDocs(text))), 'a table with it differs from the README')
})
