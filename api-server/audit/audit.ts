// The audit trail: append-only, value-free. Callers pass ids, names, hosts,
// field kinds and reasons; there is no field where a secret value could go.
import type { Queryable } from '../store/db.ts'

export interface AuditEvent {
  orgId: string
  actor: string
  action: string
  targetType?: string
  targetId?: string
  identityId?: string
  credentialId?: string
  grantId?: string
  sessionId?: string
  credentialName?: string
  host?: string
  fieldKind?: string
  reason?: string
  /** the extensions a session loaded (a fill's row names them) */
  extensionIds?: string[]
}



export async function recordAudit(db: Queryable, e: AuditEvent): Promise<void> {
  await db.query(
    `insert into audit_events (org_id, actor, action, target_type, target_id, identity_id, credential_id, grant_id, session_id, credential_name, host, field_kind, reason, extension_ids)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
    [e.orgId, e.actor, e.action, e.targetType ?? null, e.targetId ?? null, e.identityId ?? null, e.credentialId ?? null,
      e.grantId ?? null, e.sessionId ?? null, e.credentialName ?? null, e.host ?? null, e.fieldKind ?? null, e.reason ?? null, e.extensionIds ?? null],
  )
}

export interface AuditRow extends AuditEvent { id: string; createdAt: string }

export async function listAudit(db: Queryable, orgId: string, opts: { after?: number; limit: number; action?: string }): Promise<AuditRow[]> {
  const r = await db.query(
    `select * from audit_events where org_id = $1 and id > $2 and ($4::text is null or action = $4) order by id asc limit $3`,
    [orgId, opts.after ?? 0, opts.limit, opts.action ?? null],
  )
  return r.rows.map((x) => ({
    id: String(x.id), orgId: x.org_id, actor: x.actor, action: x.action, targetType: x.target_type ?? undefined,
    targetId: x.target_id ?? undefined, identityId: x.identity_id ?? undefined, credentialId: x.credential_id ?? undefined,
    grantId: x.grant_id ?? undefined, sessionId: x.session_id ?? undefined, credentialName: x.credential_name ?? undefined,
    host: x.host ?? undefined, fieldKind: x.field_kind ?? undefined, reason: x.reason ?? undefined,
    ...(x.extension_ids ? { extensionIds: x.extension_ids as string[] } : {}),
    createdAt: new Date(x.created_at).toISOString(),
  }))
}
