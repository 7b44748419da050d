// What every driving contract file shares: defineDrive, the DriveContract shape and the
// results several domains return. A leaf: drive.ts and the drive-<domain>.ts files
// import it, so the domain lists can be appended to drive.ts's without an import cycle.
import { z } from 'zod'
import type { OperationContract } from './types.ts'

export const DRIVE = ['sessions:drive'] as const

// --- results -------------------------------------------------------------------------

/**
 * What a page-changing action did to the page: `+` added and `~` changed elements with
 * their refs, `removed: … (was e9)` for ones gone (never perceive's `- role` shape of an
 * element that is there; a new document: its first lines), within a small budget. Absent when the caller turned it off (`changes: false`).
 */
export const Changes = z.string().optional().describe('what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings)')
export const NavigateResult = z.object({ url: z.string(), title: z.string(), status: z.number().int().nullable(), changes: Changes })
export const PerceiveResult = z.object({
  url: z.string(),
  title: z.string(),
  snapshot: z.string(),
  text: z.string(),
  truncated: z.boolean().optional().describe('the page holds more than this answer: call perceive with cursor to read on'),
  cursor: z.string().optional().describe('where the next perceive continues reading (given with truncated)'),
})
export const OkResult = z.object({ ok: z.literal(true), url: z.string(), changes: Changes })
export const ActResult = z.object({
  ok: z.literal(true),
  verb: z.enum(['click', 'type', 'press', 'goto', 'scroll']),
  url: z.string(),
  title: z.string().optional(),
  status: z.number().int().nullable().optional(),
  changes: Changes,
})
export const SelectOptionResult = z.object({ ok: z.literal(true), url: z.string(), selected: z.array(z.string()), changes: Changes })
export const ScreenshotResult = z.object({ png: z.string().describe('base64 PNG') })
export const PdfResult = z.object({ pdf: z.string().describe('base64 PDF') })
/** What an MCP client gets as structured content beside the image or the PDF itself (never the bytes twice). */
export const BinaryMeta = z.object({ mimeType: z.string(), bytes: z.number().int().min(0).describe('size of the decoded file') })
export const ConsoleMessage = z.object({ type: z.string(), text: z.string(), time: z.number() })
export const ConsoleResult = z.object({ messages: z.array(ConsoleMessage) })
export const FillResult = z.object({ ok: z.literal(true), credentialName: z.string(), fieldKind: z.string(), host: z.string(), changes: Changes })

/** A driving action forwarded to the browser pod: `pod` is its pod API route. */
export interface DriveContract<S extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType, N extends string = string, NO extends z.ZodType = O>
  extends OperationContract<S, O, N> {
  pod: {
    path: `/v1/${string}`
    /** top-level result fields the pod's echo guard leaves alone (base64 pixels or bytes) */
    opaque?: readonly string[]
    /** the pod's result when it is narrower than the operation's (default: `output`) */
    output?: NO
  }
}

/** A driving contract: REST at /v1/sessions/:sessionId/<restPath>, scope sessions:drive unless `scopes` says otherwise. */
export function defineDrive<S extends z.ZodObject, O extends z.ZodType, const N extends string, NO extends z.ZodType = O>(
  c: Omit<DriveContract<S, O, N, NO>, 'scopes' | 'rest'> & { restPath: string; restMethod?: 'GET' | 'POST'; scopes?: readonly string[] },
): DriveContract<S, O, N, NO> {
  const { restPath, restMethod, scopes, ...rest } = c
  return { ...rest, scopes: scopes ?? DRIVE, rest: { method: restMethod ?? 'POST', path: `/v1/sessions/:sessionId/${restPath}` } }
}

