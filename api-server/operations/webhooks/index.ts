// Webhooks: the webhook_* operations, over the app's Webhooks service.
import { implement, type OpContext } from '../types.ts'
import * as c from '../../../contracts/operations/webhooks.ts'

const hooks = (ctx: OpContext) => ctx.services.webhooks
const actor = (ctx: OpContext) => ctx.auth.principal.principalId

export const webhookCreate = implement(c.webhookCreate, {
  handler: async (ctx, { url, events, description }) => hooks(ctx).create({ orgId: ctx.auth.orgId, actor: actor(ctx), url, events, description }),
})

export const webhookList = implement(c.webhookList, {
  handler: async (ctx) => hooks(ctx).list({ orgId: ctx.auth.orgId }),
})

export const webhookDelete = implement(c.webhookDelete, {
  handler: async (ctx, { webhookId }) => {
    await hooks(ctx).delete({ orgId: ctx.auth.orgId, id: webhookId })
  },
})

export const webhookRotateSecret = implement(c.webhookRotateSecret, {
  handler: async (ctx, { webhookId, overlapSeconds }) => hooks(ctx).rotateSecret({ orgId: ctx.auth.orgId, id: webhookId, overlapSecs: overlapSeconds }),
})

export const webhookDeliveries = implement(c.webhookDeliveries, {
  handler: async (ctx, { webhookId, before, limit }) => hooks(ctx).deliveries({ orgId: ctx.auth.orgId, id: webhookId, page: { before, limit } }),
})

export const webhookEnable = implement(c.webhookEnable, {
  handler: async (ctx, { webhookId }) => hooks(ctx).enable({ orgId: ctx.auth.orgId, actor: actor(ctx), id: webhookId }),
})

export const webhookOperations = [webhookCreate, webhookList, webhookDelete, webhookRotateSecret, webhookDeliveries, webhookEnable]
