// The session object callers see.
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
}

export function sessionView(r: SessionRow): SessionView {
  const v: SessionView = {
    id: r.id, status: r.status, egress: r.egress, network: r.networkId, openedBy: r.openedBy, identity: r.identityId,
    agentId: r.agentId, browserKind: r.browserKind, url: r.url, viewport: r.viewport, createdAt: r.createdAt, liveAt: r.liveAt, endedAt: r.endedAt,
  }
  if (r.failureReason) v.failureReason = r.failureReason
  return v
}
