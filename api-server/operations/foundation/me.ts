// me, key_create, audit_list (contracts/operations/foundation.ts).
import { implement } from '../types.ts'
import { auditList as auditListContract, keyCreate as keyCreateContract, me as meContract } from '../../../contracts/operations/foundation.ts'
import { mintKey } from '../../auth/keys.ts'
import { listAudit, recordAudit } from '../../audit/audit.ts'

export const me = implement(meContract, {
  handler: async ({ auth }) => ({
    orgId: auth.orgId,
    agentId: auth.agentId,
    scopes: [...auth.scopes].sort(),
    principal: auth.principal,
  }),
})

export const keyCreate = implement(keyCreateContract, {
  handler: async ({ auth, services }, input) => {
    const key = await mintKey(services.db, {
      orgId: auth.orgId,
      name: input.name,
      scopes: input.scopes,
      agentId: input.agent || null,
      minterScopes: auth.scopes,
    })
    await recordAudit(services.db, { orgId: auth.orgId, actor: auth.principal.principalId, action: 'key.create', targetType: 'key', targetId: key.id })
    return { id: key.id, name: key.name, scopes: key.scopes, agentId: key.agentId, secret: key.secret }
  },
})

export const auditList = implement(auditListContract, {
  handler: async ({ auth, services }, input) => {
    const items = await listAudit(services.db, auth.orgId, { after: input.after, limit: input.limit, action: input.action })
    return { items, next: items.length === input.limit ? items[items.length - 1].id : null }
  },
})

export const foundationOperations = [me, keyCreate, auditList]
