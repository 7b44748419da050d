// The deprecated free-text path (RULE-16): an act whose text carries
// {{credential:<name>}}. Off by default; while off it is refused (403) and audited
// before any decrypt or node dial.
import type { Queryable } from '../store/db.ts'
import { errors } from '../../contracts/errors.ts'
import { freetextFillEnabled } from './governance.ts'
import { auditFreetextDenied } from './audit.ts'
import { findSealedCredential } from './credentials.ts'
import { credentialName as credentialNameRule } from './validation.ts'
import { narrowAndOpen, type FillDeps, type PreparedFill } from './fill.ts'

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
 * The whole free-text preparation: null when the text has no marker; otherwise the
 * governance gate, then the placeholder lookup (400 when absent, ERR-09), then the
 * same narrowing and just-in-time open as a structured fill.
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
