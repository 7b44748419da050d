// The node API contract: request schemas (validated by node-api.ts) and the result
// types NodeClient returns. One file so the two sides cannot drift.
import { z } from 'zod'

const selector = z.string().min(1).max(4096)
const timeoutMs = z.number().int().min(0).max(120_000)
const waitUntil = z.enum(['load', 'domcontentloaded', 'networkidle', 'commit'])

export const ConfigureInput = z.object({
  sessionId: z.string().min(1).max(200),
  egress: z.object({
    mode: z.enum(['platform', 'local', 'split']),
    declaredHosts: z.array(z.string().max(300)).max(1000),
  }),
  viewport: z.object({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(4320) }).optional(),
  /** Playwright storageState ({cookies, origins}) plus optional sessionStorage; restored before the first navigation. */
  storageState: z.record(z.string(), z.unknown()).optional(),
  userAgent: z.string().min(1).max(1000).optional(),
})
export type ConfigureInput = z.infer<typeof ConfigureInput>

export const NavigateInput = z.object({ url: z.string().min(1).max(8192), waitUntil: waitUntil.optional(), timeoutMs: timeoutMs.optional() })
export type NavigateInput = z.infer<typeof NavigateInput>

export const ActInput = z.object({
  verb: z.enum(['click', 'type', 'press', 'goto', 'scroll']),
  selector: selector.optional(),
  text: z.string().max(100_000).optional(),
  key: z.string().min(1).max(100).optional(),
  url: z.string().min(1).max(8192).optional(),
  direction: z.enum(['up', 'down', 'left', 'right']).optional(),
  timeoutMs: timeoutMs.optional(),
})
export type ActInput = z.infer<typeof ActInput>

export const Empty = z.object({}).passthrough()
export const ScreenshotInput = z.object({ fullPage: z.boolean().optional() })
export type ScreenshotInput = z.infer<typeof ScreenshotInput>
export const HistoryInput = z.object({ waitUntil: waitUntil.optional(), timeoutMs: timeoutMs.optional() })
export type HistoryInput = z.infer<typeof HistoryInput>
export const WaitForInput = z
  .object({ selector: selector.optional(), text: z.string().min(1).max(10_000).optional(), timeoutMs: timeoutMs.optional() })
  .refine((v) => (v.selector === undefined) !== (v.text === undefined), { message: 'give exactly one of selector or text' })
export type WaitForInput = z.infer<typeof WaitForInput>
export const SelectOptionInput = z.object({ selector, values: z.array(z.string().max(10_000)).max(1000), timeoutMs: timeoutMs.optional() })
export type SelectOptionInput = z.infer<typeof SelectOptionInput>
export const HoverInput = z.object({ selector, timeoutMs: timeoutMs.optional() })
export type HoverInput = z.infer<typeof HoverInput>

export const SecureTypeInput = z.object({
  selector,
  /** base64 of the secret; decoded into a Buffer that is zeroed after the fill. */
  value: z.string().min(1).max(100_000).regex(/^[A-Za-z0-9+/]*={0,2}$/),
  allowlist: z.array(z.string().max(300)).max(1000),
  requireEditableField: z.literal(true),
  timeoutMs: timeoutMs.optional(),
})
export type SecureTypeInput = z.infer<typeof SecureTypeInput>

// --- results -------------------------------------------------------------------------

export interface HealthResult { ok: true; configured: boolean }
export interface ConfigureResult { ok: true; sessionId: string }
export interface NavigateResult { url: string; title: string; status: number | null }
export interface PerceiveResult { url: string; title: string; snapshot: string; text: string }
export interface ActResult { ok: true; verb: ActInput['verb']; url: string; title?: string; status?: number | null }
export interface OkResult { ok: true; url: string }
export interface SelectOptionResult { ok: true; url: string; selected: string[] }
export interface ScreenshotResult { png: string }
export interface PdfResult { pdf: string }
export interface ConsoleMessage { type: string; text: string; time: number }
export interface ConsoleResult { messages: ConsoleMessage[] }
export interface SessionStorageEntry { origin: string; entries: Array<{ name: string; value: string }> }
export interface StorageStateResult {
  cookies: Array<Record<string, unknown>>
  origins: Array<{ origin: string; localStorage: Array<{ name: string; value: string }> }>
  sessionStorage: SessionStorageEntry[]
}
export type EditableKind = 'text' | 'password' | 'email' | 'textarea' | 'contenteditable'
export interface SecureTypeResult { ok: true; fieldKind: EditableKind; host: string }
