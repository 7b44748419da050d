// Input fields several operation contracts share.
import { z } from 'zod'
import { BROWSER_KINDS, EGRESS_MODES } from '../../crds/types.ts'

export const sessionId = z.string().regex(/^nsess_[0-9A-Za-z]{1,40}$/, 'must be a session id (nsess_…)')
export const egressMode = z.enum(EGRESS_MODES)
export const browserKind = z.enum(BROWSER_KINDS)
export const viewport = z.strictObject({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(4320) })
/** a session's viewport when its start names none: the pod's browser, its video's default width and the screencast all assume it */
export const DEFAULT_VIEWPORT = { width: 1280, height: 720 } as const

function hasScheme(u: string, schemes: readonly string[]): boolean {
  try {
    return schemes.includes(new URL(u).protocol)
  } catch {
    return false
  }
}
export const httpUrl = z.string().max(8192).refine((u) => hasScheme(u, ['http:', 'https:']), 'must be an http(s) URL')
export const navigableUrl = z.string().max(8192).refine((u) => hasScheme(u, ['http:', 'https:', 'data:', 'about:']), 'must be an http(s), data: or about: URL')
export const selector = z.string().min(1).max(4096)
export const identityRef = z.string().min(1).max(200)
export const networkRef = z.string().min(1).max(200)
export const timeoutMs = z.number().int().min(0).max(120_000)
export const waitUntil = z.enum(['load', 'domcontentloaded', 'networkidle', 'commit'])

/** Path ids: any short string; an unknown or foreign one is the same 404 later. */
export const idParam = z.string().min(1).max(100)
/** A timestamp on the wire (Date values are sent as toISOString()). */
export const isoTime = z.iso.datetime()

/** An element's ref from perceive's snapshot (`[ref=e12]`, `[ref=f1e3]` inside a frame): valid until its document navigates. */
export const elementRef = z.string().regex(/^(f\d{1,6})?e\d{1,9}$/, 'must be a ref from perceive’s snapshot (e12, or f1e3 inside a frame)')
  .describe('the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both')

/** The words every element tool's description ends with: how an agent names the element. */
export const TARGET_HELP = 'Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one'

/** An element tool's input check: exactly one of selector and ref (a zod object check). */
export function oneTarget(v: { selector?: string; ref?: string }): boolean {
  return (v.selector === undefined) !== (v.ref === undefined)
}
export const ONE_TARGET = { message: 'give exactly one of ref or selector' }

/** Page-changing tools: whether the answer carries what the action changed (default true). */
export const changesArg = z.boolean().optional().describe('false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default')

/** a session video's container and codec: webm (VP9) or mp4 (H.264) */
export const VIDEO_FORMATS = ['webm', 'mp4'] as const
export type VideoFormat = (typeof VIDEO_FORMATS)[number]
