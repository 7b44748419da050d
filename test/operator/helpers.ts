// Shared pieces of the operator tests (not a test file itself).
import { fileURLToPath } from 'node:url'
import type { BrowserSession, BrowserSessionSpec, Network } from '../../crds/types.ts'
import type { PodCommand } from '../../operator/embedded/child-pod.ts'
import type { AnyResource, DaemonCounts, Logger, NewResource, ResourceClient } from '../../ports/ports.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** deadline for anything that waits on a pod process starting (tsx start-up under a loaded suite) */
export const POD_TIMEOUT = 30_000

/** run test/fixtures/fake-pod.ts the way the real browser pod is run */
export function fakePodCommand(): PodCommand {
  return { command: process.execPath, args: ['--import', 'tsx', `${ROOT}test/fixtures/fake-pod.ts`], cwd: ROOT }
}

export function sessionSpec(over: Partial<BrowserSessionSpec> = {}): BrowserSessionSpec {
  return {
    orgId: 'norg_test',
    agentId: 'nagt_test',
    openedBy: { principalId: 'nagt_test', credentialId: 'nkey_test', name: 'test key' },
    browserKind: 'chromium',
    egress: 'platform',
    declaredHosts: [],
    desiredState: 'Live',
    ...over,
  }
}

export function newSession(name: string, over: Partial<BrowserSessionSpec> = {}): NewResource<BrowserSession> {
  return { metadata: { name, labels: { 'nightjar.dev/org': 'norg_test' } }, spec: sessionSpec(over) }
}

export function newNetwork(name: string, declaredHosts: string[] = []): NewResource<Network> {
  return { metadata: { name }, spec: { orgId: 'norg_test', name: `net-${name}`, declaredHosts } }
}

/** a ResourceClient wrapper that counts write calls (create/patch/patchStatus/delete) */
export function countingClient<T extends AnyResource>(inner: ResourceClient<T>): ResourceClient<T> & { writes: string[] } {
  const writes: string[] = []
  return {
    kind: inner.kind,
    writes,
    get: (n) => inner.get(n),
    list: (o) => inner.list(o),
    watch: (rv, h, o) => inner.watch(rv, h, o),
    create: (o) => (writes.push(`create ${o.metadata.name}`), inner.create(o)),
    patch: (n, p, o) => (writes.push(`patch ${n}`), inner.patch(n, p, o)),
    patchStatus: (n, s, o) => (writes.push(`patchStatus ${n}`), inner.patchStatus(n, s, o)),
    delete: (n, o) => (writes.push(`delete ${n}`), inner.delete(n, o)),
  }
}

/** DaemonCounts the test drives by hand */
export class ManualDaemonCounts implements DaemonCounts {
  private readonly values = new Map<string, { daemonCount: number; onlineDaemonCount: number }>()
  private readonly listeners = new Set<(n: string) => void>()
  set(network: string, daemonCount: number, onlineDaemonCount: number): void {
    this.values.set(network, { daemonCount, onlineDaemonCount })
    for (const l of this.listeners) l(network)
  }
  async counts(network: string) {
    return this.values.get(network) ?? { daemonCount: 0, onlineDaemonCount: 0 }
  }
  subscribe(listener: (n: string) => void) {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

/** a Logger that keeps every line, to assert that no secret was ever logged */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const rec = (level: string) => (obj: object, msg?: string) => lines.push(`${level} ${JSON.stringify(obj)} ${msg ?? ''}`)
  return { lines, debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') }
}

export { alive } from '../helpers/process.ts'
