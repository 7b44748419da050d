// Capture: an admin action (the operation requires org:admin, identities:write and
// sessions:drive) that reads a live session's cookies and storage from its browser pod
// and keeps them as a new sealed version of the session's identity. Never automatic:
// nothing else in the service calls this.
import { recordAudit } from '../audit/audit.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import { noKmsError } from '../kms/index.ts'
import type { Sealer } from '../kms/index.ts'
import { drive, type DriveDeps, type SessionRequest } from '../sessions/drive.ts'
import { coveredOrigins, sealAuthState } from './seal.ts'
import { insertVersion, type AuthStateVersionView } from './store.ts'

export const AUDIT_CAPTURE = 'authstate.capture'

export interface CaptureDeps extends DriveDeps {
  sealer: Sealer
  now: () => number
}

/** `actor`: the principal capturing (the audit row and the version's createdBy). */
export async function captureAuthState(deps: CaptureDeps, req: SessionRequest & { actor: string }): Promise<AuthStateVersionView> {
  const { db, sealer } = deps
  const { orgId, actor } = req
  // unknown and foreign sessions: the one 404 (drive → getSession); not live: 409
  return drive(deps, { ...req, op: 'authstate_capture', detail: {} }, async (pod, row) => {
    if (!row.identityId) throw errors.noIdentityToCapture()
    // fail closed before the state is even read
    if (!sealer.enabled) throw noKmsError()
    const doc = await pod.storageState()
    const versionId = newId('niver_')
    const ref = { orgId, identityId: row.identityId, versionId }
    const sealedState = await sealAuthState(sealer, ref, doc)
    const view = await insertVersion(db, {
      id: versionId, orgId, identityId: row.identityId, sealedState, origins: coveredOrigins(doc),
      createdBy: actor, createdAt: new Date(deps.now()),
    })
    // value-free: ids only
    await recordAudit(db, {
      orgId, actor, action: AUDIT_CAPTURE, targetType: 'authstate', targetId: versionId,
      identityId: row.identityId, sessionId: row.id,
    })
    return view
  })
}
