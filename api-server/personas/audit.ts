// Value-free audit rows for the fill path (EV-01..04). Each helper takes exactly the
// fields its row may carry — ids, the credential name, a host or a field kind — so
// there is no parameter a secret could be passed through.
import type { Queryable } from '../store/db.ts'
import { recordAudit } from '../audit/audit.ts'

export const AUDIT = {
  fill: 'credential.fill',
  originDenied: 'credential.origin_denied',
  fieldDenied: 'credential.field_denied',
  grantOriginDenied: 'credential.grant_origin_denied',
  freetextDenied: 'CREDENTIAL_FREETEXT_DENIED',
  extensionDenied: 'credential.extension_denied',
} as const

export interface FillAuditRef {
  orgId: string
  /** the acting agent */
  actor: string
  sessionId?: string
  identityId: string
  credentialId?: string
  credentialName: string
}

const base = (r: FillAuditRef) => ({
  orgId: r.orgId, actor: r.actor, sessionId: r.sessionId, identityId: r.identityId,
  credentialId: r.credentialId, credentialName: r.credentialName, targetType: 'credential', targetId: r.credentialId,
})

/** EV-01: one row per structured fill the pod accepted. */
export function auditFill(db: Queryable, r: FillAuditRef & { host?: string; extensionIds?: string[] }): Promise<void> {
  return recordAudit(db, { ...base(r), action: AUDIT.fill, host: r.host, ...(r.extensionIds?.length ? { extensionIds: r.extensionIds } : {}) })
}

/** Control refused before any lookup or decrypt: the session loads extensions not all trusted (their ids). */
export function auditExtensionDenied(db: Queryable, r: Omit<FillAuditRef, 'credentialName'> & { credentialName?: string; extensionIds: string[] }): Promise<void> {
  return recordAudit(db, {
    orgId: r.orgId, actor: r.actor, sessionId: r.sessionId, identityId: r.identityId, credentialName: r.credentialName,
    action: AUDIT.extensionDenied, reason: 'extension_untrusted', extensionIds: r.extensionIds,
  })
}

/** EV-03: the pod refused because the live host is not on the effective allowlist. */
export function auditOriginDenied(db: Queryable, r: FillAuditRef & { host: string }): Promise<void> {
  return recordAudit(db, { ...base(r), action: AUDIT.originDenied, host: r.host, reason: 'origin_not_allowed' })
}

/** EV-04: the pod refused because the target is not an editable field. */
export function auditFieldDenied(db: Queryable, r: FillAuditRef & { fieldKind: string }): Promise<void> {
  return recordAudit(db, { ...base(r), action: AUDIT.fieldDenied, fieldKind: r.fieldKind, reason: 'field_not_editable' })
}

/** Control refused before any decrypt: credential and grant origins are disjoint. */
export function auditGrantOriginDenied(db: Queryable, r: FillAuditRef): Promise<void> {
  return recordAudit(db, { ...base(r), action: AUDIT.grantOriginDenied, reason: 'grant_intersection' })
}

/** EV-02: a free-text {{credential:…}} marker was refused (the name only, never text). */
export function auditFreetextDenied(db: Queryable, r: { orgId: string; actor: string; sessionId?: string; identityId?: string; credentialName?: string }): Promise<void> {
  return recordAudit(db, {
    orgId: r.orgId, actor: r.actor, action: AUDIT.freetextDenied, sessionId: r.sessionId, identityId: r.identityId,
    credentialName: r.credentialName, reason: 'freetext_disabled',
  })
}
