// Driving tools: one page action each, through the session's browser pod. Every
// driving action declared in contracts/operations/drive.ts is forwarded by the one
// generic forwarder below: its input without sessionId goes to the pod's route for
// it, the pod's result is the answer. The table says what the journal keeps of each
// (value-free) and the little that differs (perceive's advisory flag, act's free-text
// credential path, the MCP rendering of pixels and bytes).
import { implement, type Implementation, type McpContent, type Operation } from '../types.ts'
import type { AnyContract } from '../../../contracts/operations/types.ts'
import { type coreDriveContracts, credentialFill, type driveContracts, sessionDriveContracts, takesChanges, type DriveName } from '../../../contracts/operations/drive.ts'
import { driveDeps, journalUrl, nothing, type DriveSpec, type DriveSpecs, type PodInputOf } from './drive-spec.ts'
import { tabDrives } from './drive-tabs.ts'
import { mouseDrives } from './drive-mouse.ts'
import { fileDrives } from './drive-files.ts'
import { inspectDrives } from './drive-inspect.ts'
import { drive } from '../../sessions/drive.ts'
import { fillCredential, freetextAct, opensFreetextMarker } from '../../secrets/fill.ts'

const coreDrives: DriveSpecs<(typeof coreDriveContracts)[number]['name']> = {
  navigate: { journal: ({ url }) => ({ url: journalUrl(url) }) },
  perceive: {
    journal: nothing,
    // full is advisory: the pod always answers with the whole page
    send: ({ full: _advisory, ...rest }) => rest,
    toMcp: (r) => ({
      content: [{
        type: 'text',
        text: `url: ${r.url}\ntitle: ${r.title}\n\n${r.snapshot}`
          + (r.text ? `\n\n--- text ---\n${r.text}` : '')
          + (r.truncated ? `\n\n--- truncated: perceive with cursor "${r.cursor}" reads on ---` : ''),
      }],
      structuredContent: { ...r },
    }),
  },
  act: {
    journal: (a) => ({ verb: a.verb, selector: a.selector, ref: a.ref, key: a.key, direction: a.direction, url: a.url ? journalUrl(a.url) : undefined, textLength: a.text?.length }),
    // the deprecated free-text credential path (api-server/secrets/fill.ts)
    divert: (ctx, sessionId, a, detail) => (a.text !== undefined && opensFreetextMarker(a.text)
      ? freetextAct(driveDeps(ctx), { orgId: ctx.auth.orgId, sessionId, text: a.text, field: { selector: a.selector, ref: a.ref, changes: a.changes ?? true }, detail })
      : null),
  },
  screenshot: {
    journal: ({ selector, ref }) => ({ selector, ref }),
    toMcp: (r) => ({ content: [{ type: 'image', data: r.png, mimeType: 'image/png' }], structuredContent: { mimeType: 'image/png', bytes: Buffer.byteLength(r.png, 'base64') } }),
  },
  go_back: { journal: nothing },
  reload: { journal: nothing },
  wait_for: { journal: (w) => ({ selector: w.selector, ref: w.ref, textLength: w.text?.length }) },
  select_option: { journal: (s) => ({ selector: s.selector, ref: s.ref, count: s.values.length }) },
  hover: { journal: ({ selector, ref }) => ({ selector, ref }) },
  pdf: {
    journal: nothing,
    toMcp: (r) => ({
      content: [{ type: 'resource', resource: { uri: 'nightjar://page.pdf', blob: r.pdf, mimeType: 'application/pdf' } }],
      structuredContent: { mimeType: 'application/pdf', bytes: Buffer.byteLength(r.pdf, 'base64') },
    }),
  },
  console_messages: { journal: nothing },
}

const drives: DriveSpecs<DriveName> = { ...coreDrives, ...tabDrives, ...mouseDrives, ...fileDrives, ...inspectDrives }

/**
 * A page-changing tool's answer as the model reads it: its fields as `name: value` lines,
 * then what changed, unescaped, in perceive's notation. As JSON text the same answer
 * escaped every quote and newline of the changes and repeated `ok` and the verb the agent
 * just sent; on a small page that framing was a third of what a task read. The url is
 * left to the changes when they are there (they name a new page or a new address, and an
 * unchanged one is no news). The JSON object stays whole in structuredContent.
 */
export function changesToMcp(r: Record<string, unknown>): McpContent {
  const { ok: _ok, verb: _verb, changes, ...fields } = r
  if (typeof changes === 'string') delete fields.url
  const head = Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
  const text = [...head, ...(typeof changes === 'string' ? (head.length ? ['', changes] : [changes]) : [])].join('\n')
  return { content: [{ type: 'text', text: text || 'done' }], structuredContent: r }
}

/** whether an operation's result carries `changes` (what a page-changing tool answers with) */
const answersWithChanges = (contract: AnyContract): boolean => {
  type Output = { shape?: Record<string, unknown>; options?: Output[] }
  const has = (o: Output): boolean => (o.options ? o.options.every(has) : !!o.shape && 'changes' in o.shape)
  return has(contract.output as Output)
}

/** The one forwarder: journal, then the pod's route for the action, typed by the contract. */
function forward<C extends (typeof driveContracts)[number]>(contract: C): Operation<C> {
  type N = C['name']
  const spec = drives[contract.name as N] as unknown as DriveSpec<N>
  return implement(contract, {
    handler: (ctx, input) => {
      const { sessionId, ...rest } = input as { sessionId: string }
      const podInput = rest as PodInputOf<N>
      const detail = spec.journal(podInput)
      const diverted = spec.divert?.(ctx, sessionId, podInput, detail)
      if (diverted) return diverted
      const given = spec.send ? spec.send(podInput) : podInput
      // a page-changing action answers with what it changed unless the agent said changes: false (the pod reads it only when asked)
      const sent = takesChanges(contract) ? { ...given, changes: (given as { changes?: boolean }).changes ?? true } : given
      return drive(driveDeps(ctx), { orgId: ctx.auth.orgId, sessionId, op: contract.name, detail }, (pod) => pod.drive(contract.name, sent as never))
    },
    ...(spec.toMcp ? { toMcp: spec.toMcp } : answersWithChanges(contract) ? { toMcp: changesToMcp } : {}),
  } as Implementation<C>)
}

const credentialFillOperation = implement(credentialFill, {
  handler: (ctx, { sessionId, credentialName, selector, ref, changes }) =>
    drive(driveDeps(ctx), { orgId: ctx.auth.orgId, sessionId, op: 'credential_fill', detail: { credentialName, selector, ref } }, (pod, session) =>
      fillCredential(driveDeps(ctx), { session, pod, credentialName, field: { selector, ref, changes: changes ?? true } })),
  toMcp: changesToMcp,
})

type OperationsOf<T extends readonly AnyContract[]> = { -readonly [K in keyof T]: T[K] extends AnyContract ? Operation<T[K]> : never }

/** The driving tools in the order they are listed (sessionDriveContracts). */
export const sessionDriveOperations = sessionDriveContracts.map((c) =>
  c === credentialFill ? credentialFillOperation : forward(c as (typeof driveContracts)[number]),
) as unknown as OperationsOf<typeof sessionDriveContracts>
