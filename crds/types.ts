// The TypeScript shape of the custom resources in crds/*.yaml (nightjar.dev/v1; the
// deprecated v1alpha1 is served with the very same shape).
// Keep the two in step: test/crds/crds.test.ts checks that objects of these types
// validate against the YAML schemas and that no field would be pruned by a real api-server.
import type { Condition, Resource } from './meta.ts'

export const GROUP = 'nightjar.dev'
/** the version the operator and the api-server speak, and the one stored (docs/upgrades.md) */
export const VERSION = 'v1'
/** versions still served for clients of earlier releases: same schema, deprecated */
export const DEPRECATED_VERSIONS = ['v1alpha1'] as const
export const API_VERSION = `${GROUP}/${VERSION}` as const

export const BROWSER_SESSION = { kind: 'BrowserSession', plural: 'browsersessions', singular: 'browsersession' } as const
export const NETWORK = { kind: 'Network', plural: 'networks', singular: 'network' } as const

/** Labels the api-server puts on resources (and the operator copies onto pods). */
export const LABELS = {
  org: 'nightjar.dev/org',
  agent: 'nightjar.dev/agent',
  identity: 'nightjar.dev/identity',
  session: 'nightjar.dev/session',
} as const

/**
 * Annotations the api-server writes on resources. `daemonCounts` carries a Network's
 * daemon counts ({"daemonCount":N,"onlineDaemonCount":M}) into the cluster, where the
 * operator (another process) turns them into status; the daemons' WebSockets live in the
 * api-server, so it is the one that knows. `requestedAt` is when a BrowserSession's start
 * was asked for (RFC 3339) — earlier than the resource itself when the start waited for a
 * launch slot — so a warm pool sizes itself to the demand, not to how fast it was served.
 */
export const ANNOTATIONS = {
  daemonCounts: 'nightjar.dev/daemon-counts',
  requestedAt: 'nightjar.dev/requested-at',
  /** the W3C traceparent of the start that created the resource (only while tracing is on) */
  traceparent: 'nightjar.dev/traceparent',
} as const

export interface DaemonCountsValue {
  daemonCount: number
  onlineDaemonCount: number
}

/** The counts an annotation holds, or zero for an absent or unreadable one. */
export function parseDaemonCounts(value: string | undefined): DaemonCountsValue {
  try {
    const v = JSON.parse(value ?? '') as Partial<DaemonCountsValue>
    const n = (x: unknown) => (typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : 0)
    return { daemonCount: n(v.daemonCount), onlineDaemonCount: n(v.onlineDaemonCount) }
  } catch {
    return { daemonCount: 0, onlineDaemonCount: 0 }
  }
}

/** The browsers a session can run: chromium (headless, pooled) or cloak (headful, its own profile). */
export const BROWSER_KINDS = ['chromium', 'cloak'] as const
export type BrowserKind = (typeof BROWSER_KINDS)[number]

/** What isolates a session's pages (browser-pod/sandbox.ts; docs/security.md). */
export const SANDBOX_KINDS = ['chromium', 'chromium+gvisor', 'gvisor', 'none'] as const
export type SandboxKind = (typeof SANDBOX_KINDS)[number]
/** Where a session's traffic goes out: the platform, the developer's network (local), or both (split). */
export const EGRESS_MODES = ['local', 'split', 'platform'] as const
export type EgressMode = (typeof EGRESS_MODES)[number]
export type DesiredState = 'Live' | 'Ended'
export type SessionPhase = 'Pending' | 'Live' | 'Ended' | 'Failed'

export interface Viewport {
  width: number
  height: number
}

export interface BrowserSessionSpec {
  orgId: string
  agentId: string
  /** the key and principal that opened it (spec: Session.openedBy) */
  openedBy: { principalId: string; credentialId: string; name: string }
  identityId?: string
  browserKind: BrowserKind
  egress: EgressMode
  /** the Network resource (its name is the network id, nnet_…) when egress is local/split */
  networkRef?: { name: string }
  /** snapshot of the network's declared hosts taken at session_start; a live session keeps it */
  declaredHosts: string[]
  viewport?: Viewport
  /** set at create but not navigated (spec) */
  url?: string
  /** restore this captured auth-state version (niver_…) before the first navigation */
  warmResume?: { versionId: string }
  /** loads browser extensions: its pod runs the full Chromium, never the headless shell (docs/extensions.md) */
  extensions?: boolean
  /** informational for the operator: the lease caps TTL but does not force-end a live session */
  leaseExpiresAt?: string
  /** the api-server sets Ended to end the session; Ended is final */
  desiredState: DesiredState
}

/** Condition types of a BrowserSession. */
export const SESSION_CONDITIONS = { Ready: 'Ready', PodScheduled: 'PodScheduled', Degraded: 'Degraded' } as const

export interface BrowserSessionStatus {
  phase?: SessionPhase
  podName?: string
  /** what isolates its pages, as the pod reported it at configure */
  sandbox?: SandboxKind
  /** pod API base URL while Live; the bearer token is never here (PodDirectory) */
  endpoint?: string
  startedAt?: string
  endedAt?: string
  conditions?: Condition[]
}

export type BrowserSession = Resource<BrowserSessionSpec, BrowserSessionStatus>

export interface NetworkSpec {
  orgId: string
  /** unique per org (the api-server enforces it) */
  name: string
  declaredHosts: string[]
}

export interface NetworkStatus {
  daemonCount?: number
  onlineDaemonCount?: number
  conditions?: Condition[]
}

export type Network = Resource<NetworkSpec, NetworkStatus>

/** Condition types of a Network. */
export const NETWORK_CONDITIONS = { Ready: 'Ready' } as const
