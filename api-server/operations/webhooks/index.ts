// Webhooks: the webhook_* operations, over the app's Webhooks service.
import { implement, type OpContext } from '../types.ts'
import * as c from '../../../contracts/operations/webhooks.ts'

const hooks = (ctx: OpContext) => ctx.services.webhooks
const actor = (ctx: OpContext) => ctx.auth.principal.principalId

export const webhookCreate = implement(c.webhookCreate, {
  handler: async (ctx, input) => hooks(ctx).create(ctx.auth.orgId, actor(ctx), input),
})

export const webhookList = implement(c.webhookList, {
  handler: async (ctx) => hooks(ctx).list(ctx.auth.orgId),
})

export const webhookDelete = implement(c.webhookDelete, {
  handler: async (ctx, { webhookId }) => {
    await hooks(ctx).delete(ctx.auth.orgId, webhookId)
  },
})

export const webhookRotateSecret = implement(c.webhookRotateSecret, {
  handler: async (ctx, { webhookId, overlapSeconds }) => hooks(ctx).rotateSecret(ctx.auth.orgId, webhookId, overlapSeconds),
})

export const webhookDeliveries = implement(c.webhookDeliveries, {
  handler: async (ctx, { webhookId, before, limit }) => hooks(ctx).deliveries(ctx.auth.orgId, webhookId, { before, limit }),
})

export const webhookEnable = implement(c.webhookEnable, {
  handler: async (ctx, { webhookId }) => hooks(ctx).enable(ctx.auth.orgId, actor(ctx), webhookId),
})

export const webhookOperations = [webhookCreate, webhookList, webhookDelete, webhookRotateSecret, webhookDeliveries, webhookEnable]
