// Per-org governance flags. An org without a row has the defaults: free-text fill
// off (RULE-16), cloak off, no advisor origins, sessions not recorded (nor filmed) unless asked.
import type { Queryable } from '../store/db.ts'

export interface Governance {
  credential_freetext_fill: boolean
  cloakEnabled: boolean
  declaredAdvisorOrigins: string[]
  /** the default for a session start that leaves `record` out */
  recordSessions: boolean
  /** the default for a session start that leaves `video` out (docs/sessions.md#video) */
  videoSessions: boolean
  /** the org's bound on a video's length, in seconds; null: the platform's alone (the lower applies) */
  videoMaxSeconds: number | null
  /** the org's bound on a video's size, in MiB; null: the platform's alone (the lower applies) */
  videoMaxMiB: number | null
  /** the org admin's allowlist of upstream proxy hosts (host[:port]); empty allows none (docs/proxy.md) */
  proxyHosts: string[]
}

export const DEFAULT_GOVERNANCE: Governance = { credential_freetext_fill: false, cloakEnabled: false, declaredAdvisorOrigins: [], recordSessions: false, videoSessions: false, videoMaxSeconds: null, videoMaxMiB: null, proxyHosts: [] }

export async function getGovernance(db: Queryable, orgId: string): Promise<Governance> {
  const r = await db.query(`select * from org_governance where org_id = $1`, [orgId])
  const row = r.rows[0]
  if (!row) return { ...DEFAULT_GOVERNANCE, declaredAdvisorOrigins: [], proxyHosts: [] }
  return { credential_freetext_fill: row.credential_freetext_fill, cloakEnabled: row.cloak_enabled, declaredAdvisorOrigins: row.declared_advisor_origins, recordSessions: row.record_sessions, videoSessions: row.video_sessions,
    videoMaxSeconds: row.video_max_seconds ?? null, videoMaxMiB: row.video_max_mib ?? null, proxyHosts: row.proxy_hosts ?? [] }
}

/** Applies the fields given; fields left out keep their current value. */
export async function putGovernance(db: Queryable, orgId: string, patch: Partial<Governance>, at: Date): Promise<Governance> {
  const current = await getGovernance(db, orgId)
  const next: Governance = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) }
  await db.query(
    `insert into org_governance (org_id, credential_freetext_fill, cloak_enabled, declared_advisor_origins, record_sessions, video_sessions, video_max_seconds, video_max_mib, proxy_hosts, updated_at)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
     on conflict (org_id) do update set credential_freetext_fill = excluded.credential_freetext_fill,
       cloak_enabled = excluded.cloak_enabled, declared_advisor_origins = excluded.declared_advisor_origins,
       record_sessions = excluded.record_sessions, video_sessions = excluded.video_sessions,
       video_max_seconds = excluded.video_max_seconds, video_max_mib = excluded.video_max_mib, proxy_hosts = excluded.proxy_hosts, updated_at = excluded.updated_at`,
    [orgId, next.credential_freetext_fill, next.cloakEnabled, next.declaredAdvisorOrigins, next.recordSessions, next.videoSessions, next.videoMaxSeconds, next.videoMaxMiB, next.proxyHosts, at],
  )
  return next
}

export async function freetextFillEnabled(db: Queryable, orgId: string): Promise<boolean> {
  return (await getGovernance(db, orgId)).credential_freetext_fill
}

/** Cloak gate helper (RULE-19): is the url's origin exactly one of the declared advisor origins? */
export function urlIsAdvisorOrigin(url: string, declared: readonly string[]): boolean {
  let origin: string
  try {
    origin = new URL(url).origin
  } catch {
    return false
  }
  return declared.includes(origin)
}

export { normalizeAdvisorOrigin } from '../../contracts/operations/personas.ts'
