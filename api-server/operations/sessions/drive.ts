// Driving tools: one page action each, through the session's browser pod.
import { z } from 'zod'
import { defineOperation, type McpContent } from '../types.ts'
import { drive, liveSession, nodeFor } from '../../sessions/drive.ts'
import { fillCredential, freetextFill } from '../../sessions/fill.ts'
import { journal } from '../../sessions/store.ts'
import { journalUrl, navigableUrl, selector, sessionId, timeoutMs } from './schemas.ts'

const DRIVE = ['sessions:drive'] as const

export const navigate = defineOperation({
  name: 'navigate',
  description: 'Navigate the session’s page; returns the resolved url after redirects',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, url: navigableUrl }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/navigate' },
  handler: (ctx, { sessionId, url }) => drive(ctx, sessionId, 'navigate', { url: journalUrl(url) }, (node) => node.navigate({ url })),
})

export const perceive = defineOperation({
  name: 'perceive',
  description: 'Read the page: url, title, accessibility snapshot and visible text (password values never appear)',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, full: z.boolean().optional().describe('advisory; not forwarded') }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/perceive' },
  handler: (ctx, { sessionId }) => drive(ctx, sessionId, 'perceive', {}, (node) => node.perceive()),
  toMcp: (r) => ({
    content: [{ type: 'text', text: `url: ${r.url}\ntitle: ${r.title}\n\n${r.snapshot}\n\n--- text ---\n${r.text}` }],
    structuredContent: { ...r },
  }),
})

export const act = defineOperation({
  name: 'act',
  description: 'One page action: click, type, press, goto or scroll',
  scopes: DRIVE,
  input: z.strictObject({
    sessionId,
    verb: z.enum(['click', 'type', 'press', 'goto', 'scroll']),
    selector: selector.optional(),
    text: z.string().max(100_000).optional(),
    key: z.string().min(1).max(100).optional(),
    url: navigableUrl.optional(),
    direction: z.enum(['up', 'down', 'left', 'right']).optional(),
  }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/act' },
  handler: async (ctx, { sessionId, ...a }) => {
    const detail = { verb: a.verb, selector: a.selector, key: a.key, direction: a.direction, url: a.url ? journalUrl(a.url) : undefined, textLength: a.text?.length }
    if (a.text !== undefined && /\{\{credential:/.test(a.text)) {
      // the deprecated free-text credential path: refused before any decrypt or node dial unless enabled
      const row = await liveSession(ctx, sessionId)
      try {
        const out = await freetextFill(ctx, row, a.text, a.selector, () => nodeFor(ctx, row))
        await journal(ctx.services.db, row, { op: 'act', detail: { ...detail, textLength: undefined, freetext: true }, outcome: 'ok' })
        return out
      } catch (e) {
        await journal(ctx.services.db, row, { op: 'act', detail: { ...detail, textLength: undefined, freetext: true }, outcome: 'error', errorCode: (e as { reason?: string }).reason ?? 'error' })
        throw e
      }
    }
    return drive(ctx, sessionId, 'act', detail, (node) => node.act(a))
  },
})

export const credentialFill = defineOperation({
  name: 'credential_fill',
  description: 'Securely type a persona credential into a field; the secret is never returned or shown',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, credentialName: z.string().min(1).max(64), selector }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/fill-credential' },
  handler: (ctx, { sessionId, credentialName, selector }) =>
    drive(ctx, sessionId, 'credential_fill', { credentialName, selector }, (node, row) => fillCredential(ctx, node, row, { credentialName, selector })),
})

export const screenshot = defineOperation({
  name: 'screenshot',
  description: 'PNG of the page',
  scopes: DRIVE,
  input: z.strictObject({ sessionId }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/screenshot' },
  handler: (ctx, { sessionId }) => drive(ctx, sessionId, 'screenshot', {}, (node) => node.screenshot({})),
  toMcp: (r): McpContent => ({ content: [{ type: 'image', data: r.png, mimeType: 'image/png' }] }),
})

export const goBack = defineOperation({
  name: 'go_back',
  description: 'Go back in the page history',
  scopes: DRIVE,
  input: z.strictObject({ sessionId }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/go-back' },
  handler: (ctx, { sessionId }) => drive(ctx, sessionId, 'go_back', {}, (node) => node.goBack()),
})

export const reload = defineOperation({
  name: 'reload',
  description: 'Reload the page',
  scopes: DRIVE,
  input: z.strictObject({ sessionId }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/reload' },
  handler: (ctx, { sessionId }) => drive(ctx, sessionId, 'reload', {}, (node) => node.reload()),
})

export const waitFor = defineOperation({
  name: 'wait_for',
  description: 'Wait until a selector or a text appears (exactly one of them)',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, selector: selector.optional(), text: z.string().min(1).max(10_000).optional(), timeoutMs: timeoutMs.optional() })
    .refine((v) => (v.selector === undefined) !== (v.text === undefined), { message: 'give exactly one of selector or text' }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/wait-for' },
  handler: (ctx, { sessionId, ...w }) => drive(ctx, sessionId, 'wait_for', { selector: w.selector, textLength: w.text?.length }, (node) => node.waitFor(w as never)),
})

export const selectOption = defineOperation({
  name: 'select_option',
  description: 'Select options of a <select>',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, selector, values: z.array(z.string().max(10_000)).min(1).max(1000) }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/select-option' },
  handler: (ctx, { sessionId, ...s }) => drive(ctx, sessionId, 'select_option', { selector: s.selector, count: s.values.length }, (node) => node.selectOption(s)),
})

export const hover = defineOperation({
  name: 'hover',
  description: 'Hover over an element',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, selector }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/hover' },
  handler: (ctx, { sessionId, selector }) => drive(ctx, sessionId, 'hover', { selector }, (node) => node.hover({ selector })),
})

export const pdf = defineOperation({
  name: 'pdf',
  description: 'PDF of the page',
  scopes: DRIVE,
  input: z.strictObject({ sessionId }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/pdf' },
  handler: (ctx, { sessionId }) => drive(ctx, sessionId, 'pdf', {}, (node) => node.pdf()),
  toMcp: (r): McpContent => ({ content: [{ type: 'resource', resource: { uri: 'nightjar://page.pdf', blob: r.pdf, mimeType: 'application/pdf' } }] }),
})

export const consoleMessages = defineOperation({
  name: 'console_messages',
  description: 'Console messages the page logged',
  scopes: DRIVE,
  input: z.strictObject({ sessionId }),
  rest: { method: 'GET', path: '/v1/sessions/:sessionId/console' },
  handler: (ctx, { sessionId }) => drive(ctx, sessionId, 'console_messages', {}, (node) => node.console()),
})

export const sessionDriveOperations = [navigate, perceive, act, credentialFill, screenshot, goBack, reload, waitFor, selectOption, hover, pdf, consoleMessages]
