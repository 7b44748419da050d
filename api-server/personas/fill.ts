// Fill preparation, control side (RULE-01..03): find the credential, narrow its
// origins by the winning live grant, refuse a disjoint result before any decrypt,
// and only then open the secret just in time. The node side (live host, editable
// field, typing, wiping) belongs to the session layer, which owns the Buffer next.
import type { Queryable } from '../store/db.ts'
import type { Sealer } from '../kms/index.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import { intersectAllowlists } from '../../contracts/hosts.ts'
import { findSealedCredential, type SealedCredential } from './credentials.ts'
import { grantsFor } from './grants.ts'
import { pickWinningGrant } from './grant-selection.ts'
import { grantPrincipalFor } from './principal.ts'
import { openCredentialValue } from './seal.ts'
import { credentialValueToType } from './totp.ts'
import { auditGrantOriginDenied } from './audit.ts'
import { credentialName as credentialNameRule } from './validation.ts'

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
  /** the plaintext; the caller zeroes it (secret.fill(0)) as soon as the node accepts */
  secret: Buffer
}

export const grantOriginDenied = () => errors.grantOriginDenied()

/** ERR-08. The name is echoed only when it has the shape of a name, never arbitrary text. */
export function noCredentialNamed(name: string): ApiError {
  const shown = credentialNameRule.safeParse(name).success ? name : '(invalid name)'
  return errors.noCredentialNamed(shown)
}

export async function prepareFill(deps: FillDeps, req: FillRequest): Promise<PreparedFill> {
  const cred = await findSealedCredential(deps.db, { orgId: req.orgId, identityId: req.identityId, name: req.credentialName })
  if (!cred) throw noCredentialNamed(req.credentialName)
  return narrowAndOpen(deps, cred, req)
}

/** Shared by the structured and the free-text path once the credential is known. */
export async function narrowAndOpen(deps: FillDeps, cred: SealedCredential, req: Omit<FillRequest, 'credentialName'>): Promise<PreparedFill> {
  const principal = await grantPrincipalFor(deps.db, req.orgId, req.agentId)
  // A grant revoked or expired after bind stops further fills (fail closed); the
  // lease itself is kept until the session ends (ST-06).
  const grant = pickWinningGrant(await grantsFor(deps.db, req.orgId, cred.identityId, principal.agentId), deps.now())
  const allowlist = intersectAllowlists(cred.originAllowlist, grant.allowedOrigins)
  if (allowlist.length === 0) {
    await auditGrantOriginDenied(deps.db, {
      orgId: req.orgId, actor: req.agentId, sessionId: req.sessionId, identityId: cred.identityId, credentialId: cred.id, credentialName: cred.name,
    })
    throw grantOriginDenied() // before any decrypt: the secret is never opened
  }
  const opened = await openCredentialValue(deps.sealer, { orgId: cred.orgId, identityId: cred.identityId, credentialId: cred.id }, cred.sealedValue)
  // a TOTP credential types its current code: computed here, the seed zeroed here
  const secret = credentialValueToType(cred, opened, deps.now())
  return { credentialId: cred.id, credentialName: cred.name, identityId: cred.identityId, grantId: grant.id, allowlist, secret }
}
