// The api-server's rows for the driving actions of contracts/operations/drive-inspect.ts:
// what the journal keeps of each (never typed text, page content or bytes). evaluate
// keeps the code's length only, and is refused on an identity-bound session before
// anything reaches the pod: page JavaScript there could read what the sealed fill typed.
import type { inspectContracts } from '../../../contracts/operations/drive-inspect.ts'
import { errors } from '../../../contracts/errors.ts'
import type { OpContext } from '../types.ts'
import { drive, liveSession } from '../../sessions/drive.ts'
import { journalLater } from '../../sessions/store.ts'
import { driveDeps, type DriveSpecs, type PodInputOf, type ResultOf } from './drive-spec.ts'

export const inspectDrives: DriveSpecs<(typeof inspectContracts)[number]['name']> = {
  network_requests: { journal: ({ method, resourceType, limit, urlContains }) => ({ method, resourceType, limit, urlFilter: urlContains !== undefined || undefined }) },
  evaluate: {
    journal: ({ expression, timeoutMs }) => ({ expressionLength: expression.length, timeoutMs }),
    divert: (ctx, sessionId, input, detail) => evaluateUnbound(ctx, sessionId, input, detail),
  },
}

/** evaluate, on a session without a bound identity only (the refusal is journalled like any failed call). */
async function evaluateUnbound(ctx: OpContext, sessionId: string, input: PodInputOf<'evaluate'>, detail: Record<string, unknown>): Promise<ResultOf<'evaluate'>> {
  const row = await liveSession(ctx.services, { orgId: ctx.auth.orgId, sessionId })
  if (row.identityId !== null) {
    const refused = errors.evaluateIdentityBound()
    journalLater(ctx.services.db, row, { op: 'evaluate', detail, outcome: 'error', errorCode: refused.reason ?? refused.code }, (err) => ctx.log.error({ err }, 'journal write failed'))
    throw refused
  }
  return drive(driveDeps(ctx), { orgId: ctx.auth.orgId, sessionId, op: 'evaluate', detail }, (pod) => pod.drive('evaluate', input))
}
