// The secret path, api-server side (INV-02, RULE-01..03, RULE-16): the sealed fill as one
// pipeline, seal → find → narrow → open → type → audit; seal refuses a session loading an
// extension not trusted, before anything is looked up. A disjoint origin set is refused before
// any decrypt, the secret is opened just in time and its Buffer zeroed whatever happens,
// and the audit is value-free. The deprecated free-text path only finds the credential
// another way. Design: docs/ARCHITECTURE.md#the-secret-path-two-homes
import type { Queryable } from '../store/db.ts'
import type { Sealer } from '../kms/index.ts'
import { errors, isApiError, isError, type ApiError } from '../../contracts/errors.ts'
import { boundedLabel, credentialFills } from '../metrics/product.ts'
import { inSpan } from '../../telemetry/tracing.ts'
import { intersectAllowlists } from '../../contracts/hosts.ts'
import { findSealedCredential, type SealedCredential } from '../personas/credentials.ts'
import { grantsFor } from '../personas/grants.ts'
import { pickWinningGrant } from '../personas/grant-selection.ts'
import { grantPrincipalFor } from '../personas/principal.ts'
import { openCredentialValue } from '../personas/seal.ts'
import { credentialValueToType } from '../personas/totp.ts'
import { freetextFillEnabled } from '../personas/governance.ts'
import { auditExtensionDenied, auditFill, auditOriginDenied, auditFieldDenied, auditFreetextDenied, auditGrantOriginDenied, type FillAuditRef } from '../personas/audit.ts'
import { sessionExtensionTrust } from '../extensions/service.ts'
import { credentialName as credentialNameRule } from '../personas/validation.ts'
import type { PodClient } from '../sessions/pod-client.ts'
import { journal, type SessionRow } from '../sessions/store.ts'
import { liveSession, podFor, type DriveDeps, type SessionRequest } from '../sessions/drive.ts'
import { assertAgentDrives } from '../sessions/control.ts'

/** What the fill uses: the database, the clock (grant expiry, TOTP step) and the sealer. */
export interface FillDeps {
  db: Queryable
  now: () => number
  sealer: Sealer
}

export interface FillRequest {
  orgId: string
  agentId: string
  identityId: string
  credentialName: string
  /** for the audit row of a refusal */
  sessionId?: string
}

export interface PreparedFill {
  credentialId: string
  credentialName: string
  identityId: string
  grantId: string
  /** effective origins: credential allowlist ∩ winning grant's allowedOrigins, never empty */
  allowlist: string[]
  /** the plaintext; the type step zeroes it (secret.fill(0)) whatever happens */
  secret: Buffer
}

/** The field a fill types into: a selector or a ref from perceive (exactly one), and whether the answer says what changed. */
export interface FillTarget {
  selector?: string
  ref?: string
  changes?: boolean
}

export interface FillOutcome {
  ok: true
  credentialName: string
  fieldKind: string
  host: string
  /** what the fill changed on the page (perceive's notation, the value masked) */
  changes?: string
}

export const noBoundIdentity = () => errors.noBoundIdentity()
export const grantOriginDenied = () => errors.grantOriginDenied()

/** ERR-08. The name is echoed only when it has the shape of a name, never arbitrary text. */
export function noCredentialNamed(name: string): ApiError {
  const shown = credentialNameRule.safeParse(name).success ? name : '(invalid name)'
  return errors.noCredentialNamed(shown)
}

// ── the steps ────────────────────────────────────────────────────────────────

/**
 * 0. seal: an extension's content script reads every field of the pages it matches, so a
 * session loading one an org admin does not trust now gets no fill at all. Decided here, by
 * the session's row and today's trust, never by the page; refused and audited before the
 * credential is even looked up. Answers the (trusted) extensions loaded, for the audit row.
 */
async function checkExtensionSeal(deps: Pick<FillDeps, 'db'>, session: SessionRow, credentialName?: string): Promise<string[]> {
  const { loaded, untrusted } = await sessionExtensionTrust(deps.db, { orgId: session.orgId, sessionId: session.id })
  if (!untrusted.length) return loaded
  const shown = credentialName !== undefined && credentialNameRule.safeParse(credentialName).success ? credentialName : undefined
  await auditExtensionDenied(deps.db, {
    orgId: session.orgId, actor: session.agentId, sessionId: session.id, identityId: session.identityId ?? '', credentialName: shown, extensionIds: untrusted,
  })
  throw errors.extensionUntrusted(untrusted.join(', '))
}

/** 1. find: the identity's credential of that name (ERR-08 when there is none). */
async function find(deps: Pick<FillDeps, 'db'>, req: FillRequest): Promise<SealedCredential> {
  const cred = await findSealedCredential(deps.db, { orgId: req.orgId, identityId: req.identityId, name: req.credentialName })
  if (!cred) throw noCredentialNamed(req.credentialName)
  return cred
}

/**
 * 2. narrow: the credential's origins ∩ the winning live grant's. A grant revoked or
 * expired after bind stops further fills (fail closed; the lease is kept until the session
 * ends, ST-06). A disjoint result is audited and refused here, before any decrypt.
 */
async function narrow(deps: Pick<FillDeps, 'db' | 'now'>, cred: SealedCredential, req: Omit<FillRequest, 'credentialName'>): Promise<{ grantId: string; allowlist: string[] }> {
  const principal = await grantPrincipalFor(deps.db, req.orgId, req.agentId)
  const grant = pickWinningGrant(await grantsFor(deps.db, req.orgId, cred.identityId, principal.agentId), deps.now())
  const allowlist = intersectAllowlists(cred.originAllowlist, grant.allowedOrigins)
  if (allowlist.length === 0) {
    await auditGrantOriginDenied(deps.db, {
      orgId: req.orgId, actor: req.agentId, sessionId: req.sessionId, identityId: cred.identityId, credentialId: cred.id, credentialName: cred.name,
    })
    throw grantOriginDenied() // the secret is never opened
  }
  return { grantId: grant.id, allowlist }
}

/** 3. open: decrypt just in time; a TOTP credential yields its current code (the seed zeroed here). */
async function open(deps: Pick<FillDeps, 'sealer' | 'now'>, cred: SealedCredential): Promise<Buffer> {
  const opened = await openCredentialValue(deps.sealer, { orgId: cred.orgId, identityId: cred.identityId, credentialId: cred.id }, cred.sealedValue)
  return credentialValueToType(cred, opened, deps.now())
}

/** narrow → open, once the credential is found (by name, or by the free-text marker). */
async function narrowAndOpen(deps: FillDeps, cred: SealedCredential, req: Omit<FillRequest, 'credentialName'>): Promise<PreparedFill> {
  const { grantId, allowlist } = await narrow(deps, cred, req)
  const secret = await open(deps, cred)
  return { credentialId: cred.id, credentialName: cred.name, identityId: cred.identityId, grantId, allowlist, secret }
}

/** find → narrow → open: a secret ready to type (the caller of this alone zeroes it). */
export async function prepareFill(deps: FillDeps, req: FillRequest): Promise<PreparedFill> {
  return narrowAndOpen(deps, await find(deps, req), req)
}

/**
 * 4. type, then 5. audit: the pod types the secret into an editable field on an allowed
 * live host; success and the pod's refusals (origin, field) are audited value-free. The
 * Buffer is zeroed whatever happens.
 */
async function typeAndAudit(deps: Pick<FillDeps, 'db'>, pod: PodClient, session: SessionRow, prepared: PreparedFill, field: FillTarget, extensionIds: string[]): Promise<FillOutcome> {
  const ref: FillAuditRef = {
    orgId: session.orgId, actor: session.agentId, sessionId: session.id, identityId: prepared.identityId,
    credentialId: prepared.credentialId, credentialName: prepared.credentialName,
  }
  try {
    const r = await pod.secureType({ selector: field.selector, ref: field.ref, changes: field.changes, value: prepared.secret, allowlist: prepared.allowlist })
    await auditFill(deps.db, { ...ref, host: r.host, extensionIds })
    const out: FillOutcome = { ok: true, credentialName: prepared.credentialName, fieldKind: r.fieldKind, host: r.host }
    return r.changes === undefined ? out : { ...out, changes: r.changes }
  } catch (e) {
    if (isError(e, 'credentialOriginDenied')) {
      await auditOriginDenied(deps.db, { ...ref, host: e.details?.host ?? 'unknown' })
    } else if (isError(e, 'credentialFieldDenied')) {
      await auditFieldDenied(deps.db, { ...ref, fieldKind: e.details?.field_kind ?? 'unknown' })
    }
    throw e
  } finally {
    prepared.secret.fill(0)
  }
}

// ── the pipeline ─────────────────────────────────────────────────────────────

/**
 * A fill, counted by outcome (ok, or the refusal's code) and traced as one span whose
 * attributes are the outcome alone: never the credential's name, value, field or host.
 */
function countedFill<T>(fill: () => Promise<T>): Promise<T> {
  return inSpan('credential.fill', {}, async () => {
    try {
      const out = await fill()
      credentialFills.inc({ outcome: 'ok' })
      return out
    } catch (e) {
      credentialFills.inc({ outcome: boundedLabel(isApiError(e) ? e.reason ?? e.code : 'internal') })
      throw e
    }
  })
}

/** credential_fill on a live session whose pod is at hand: find → narrow → open → type → audit. */
export async function fillCredential(
  deps: FillDeps,
  req: { session: SessionRow; pod: PodClient; credentialName: string; field: FillTarget },
): Promise<FillOutcome> {
  const { session } = req
  return countedFill(async () => {
    if (!session.identityId) throw noBoundIdentity()
    const extensionIds = await checkExtensionSeal(deps, session, req.credentialName)
    const prepared = await prepareFill(deps, {
      orgId: session.orgId, agentId: session.agentId, identityId: session.identityId, credentialName: req.credentialName, sessionId: session.id,
    })
    return typeAndAudit(deps, req.pod, session, prepared, req.field, extensionIds)
  })
}

// ── DEPRECATED STEP: the free-text path (RULE-16) ───────────────────────────
// An act of verb type whose text carries {{credential:<name>}}. Off by default; while
// off it is refused (403) and audited before any decrypt or pod dial. When on, the
// marker replaces step 1 (find); narrow → open → type → audit are the pipeline's own.

// Deliberately looser than a credential name: anything shaped like a marker is
// caught (and refused while the flag is off), not just well-formed ones.
const MARKER = /\{\{credential:([^{}]{0,200})\}\}/

export interface FreetextMarker {
  /** the whole marker, e.g. {{credential:login}} */
  placeholder: string
  name: string
}

/** The first credential marker in the text, or null. */
export function findFreetextMarker(text: unknown): FreetextMarker | null {
  if (typeof text !== 'string') return null
  const m = MARKER.exec(text)
  return m ? { placeholder: m[0], name: m[1] } : null
}

/** Whether a text opens a marker at all (the act is diverted here, whole marker or not). */
export const opensFreetextMarker = (text: string): boolean => /\{\{credential:/.test(text)

export const freetextDenied = () => errors.freetextDenied()

export interface FreetextAuditContext {
  actor: string
  sessionId?: string
  identityId?: string
  credentialName?: string
}

/** Throws 403 freetext_disabled (and writes CREDENTIAL_FREETEXT_DENIED) while the org flag is off. */
export async function checkFreetextAllowed(deps: { db: Queryable }, orgId: string, audit: FreetextAuditContext = { actor: 'unknown' }): Promise<void> {
  if (await freetextFillEnabled(deps.db, orgId)) return
  await auditFreetextDenied(deps.db, { orgId, ...audit })
  throw freetextDenied()
}

/**
 * The free-text find: null when the text has no marker; otherwise the governance gate,
 * then the placeholder lookup (400 when absent, ERR-09), then narrow → open.
 */
export async function prepareFreetextFill(
  deps: FillDeps,
  req: { orgId: string; agentId: string; identityId: string; text: string; sessionId?: string },
): Promise<PreparedFill | null> {
  const marker = findFreetextMarker(req.text)
  if (!marker) return null
  // audit rows carry a credential name only when it is one (never arbitrary text)
  const credentialName = credentialNameRule.safeParse(marker.name).success ? marker.name : undefined
  await checkFreetextAllowed(deps, req.orgId, { actor: req.agentId, sessionId: req.sessionId, identityId: req.identityId, credentialName })
  const cred = await findSealedCredential(deps.db, { orgId: req.orgId, identityId: req.identityId, placeholder: marker.placeholder })
  if (!cred) throw errors.noCredentialPlaceholder(credentialName ? marker.placeholder : '(invalid placeholder)')
  return narrowAndOpen(deps, cred, req)
}

/** The free-text fill on a live session; null when the text carries no whole marker. */
async function freetextFill(deps: FillDeps & Pick<DriveDeps, 'db' | 'sessions'>, session: SessionRow, text: string, field: FillTarget): Promise<FillOutcome | null> {
  if (!opensFreetextMarker(text)) return null
  if (!session.identityId) {
    // still refuse (and audit) while the flag is off, so the marker never reaches a page
    await checkFreetextAllowed(deps, session.orgId, { actor: session.agentId, sessionId: session.id })
    throw noBoundIdentity()
  }
  // while the org flag is off prepareFreetextFill refuses as it always has; once on, the seal
  // decides before the placeholder is looked up
  const extensionIds = (await freetextFillEnabled(deps.db, session.orgId)) ? await checkExtensionSeal(deps, session) : []
  const prepared = await prepareFreetextFill(deps, { orgId: session.orgId, agentId: session.agentId, identityId: session.identityId, text, sessionId: session.id })
  if (!prepared) return null
  if (!field.selector && !field.ref) {
    prepared.secret.fill(0)
    throw errors.invalidRequest('selector or ref: required for a credential fill')
  }
  return typeAndAudit(deps, await podFor(deps, session), session, prepared, field, extensionIds)
}

/**
 * The act diverted here (its text opens a marker): refused before any decrypt or pod
 * dial unless enabled; journalled as a free-text act, without the text's size.
 */
export async function freetextAct(
  deps: FillDeps & Pick<DriveDeps, 'db' | 'sessions'>,
  req: SessionRequest & { text: string; field: FillTarget; detail: Record<string, unknown> },
): Promise<FillOutcome> {
  const session = await liveSession(deps, req)
  assertAgentDrives(session, 'act')
  const entry = { op: 'act', detail: { ...req.detail, textLength: undefined, freetext: true } }
  try {
    const out = await countedFill(async () => {
      const filled = await freetextFill(deps, session, req.text, req.field)
      // the text opens a marker but holds no whole one: nothing is typed (the marker never reaches a page)
      if (!filled) throw errors.invalidRequest('text: a credential marker reads {{credential:<name>}}')
      return filled
    })
    await journal(deps.db, session, { ...entry, outcome: 'ok' })
    return out
  } catch (e) {
    await journal(deps.db, session, { ...entry, outcome: 'error', errorCode: (e as { reason?: string }).reason ?? 'error' })
    throw e
  }
}
