// The session object callers see.
import type { SandboxKind } from '../../crds/types.ts'
import type { SessionRow } from './store.ts'

export interface SessionView {
  id: string
  status: SessionRow['status']
  egress: SessionRow['egress']
  network: string | null
  openedBy: SessionRow['openedBy']
  identity: string | null
  agentId: string
  browserKind: SessionRow['browserKind']
  url: string | null
  viewport: SessionRow['viewport']
  createdAt: string
  liveAt: string | null
  endedAt: string | null
  failureReason?: string
  /** once live: what isolates its pages (chromium, chromium+gvisor, gvisor, none) */
  sandbox?: SandboxKind
  /** the session ends after this long without a driving call */
  idleTimeoutSecs: number | null
  /** and at the latest this long after it went live */
  maxDurationSecs: number | null
  /** why it ended on its own: idle_timeout or max_duration */
  endReason?: string
  /** while a start waits for a browser: its place in line (1 = next) */
  queuePosition?: number
  /** the upstream proxy, without its credentials */
  proxy?: { url: string; authenticated: boolean }
  /** who drives the browser: the agent, or a person who took control in the console */
  control: 'agent' | 'human'
  /** the browser extensions it loads, when any */
  extensions?: string[]
}

export function sessionView(r: SessionRow, queuePosition?: number): SessionView {
  const v: SessionView = {
    id: r.id, status: r.status, egress: r.egress, network: r.networkId, openedBy: r.openedBy, identity: r.identityId,
    agentId: r.agentId, browserKind: r.browserKind, url: r.url, viewport: r.viewport, createdAt: r.createdAt, liveAt: r.liveAt, endedAt: r.endedAt,
    idleTimeoutSecs: r.idleTimeoutSecs, maxDurationSecs: r.maxDurationSecs, control: r.control ?? 'agent',
  }
  if (r.failureReason) v.failureReason = r.failureReason
  if (r.sandbox) v.sandbox = r.sandbox
  if (r.endReason) v.endReason = r.endReason
  if (r.proxy) v.proxy = r.proxy
  if (r.extensions?.length) v.extensions = r.extensions
  if (queuePosition !== undefined && r.status === 'pending') v.queuePosition = queuePosition
  return v
}
