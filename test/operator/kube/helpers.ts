// Shared pieces of the Kubernetes tests (not a test file).
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { kubeConfigFor } from '../../../operator/kube/kube-config.ts'
import { FakeKubeApi, typeFromCrd } from './fake-apiserver.ts'

export const NS = 'nightjar-sessions'
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
export const CRD_FILES = ['browsersessions.nightjar.dev.yaml', 'networks.nightjar.dev.yaml']

export function loadCrds(): Record<string, any>[] {
  return CRD_FILES.map((f) => parse(readFileSync(`${ROOT}crds/${f}`, 'utf8')))
}

/** the test API server, serving the project's CRDs (or none) plus pods, secrets and leases */
export async function startApi(opts: { crds?: boolean; token?: string } = {}): Promise<FakeKubeApi> {
  const types = opts.crds === false ? [] : loadCrds().map(typeFromCrd)
  return new FakeKubeApi({ types, token: opts.token ?? 'test-sa-token' }).start()
}

export function kubeConfig(api: FakeKubeApi, token = 'test-sa-token') {
  return kubeConfigFor(api.url, token)
}
