// Input pieces shared by the session operations.
import { z } from 'zod'

export const sessionId = z.string().regex(/^nsess_[0-9A-Za-z]{1,40}$/, 'must be a session id (nsess_…)')
export const egress = z.enum(['local', 'split', 'platform'])
export const viewport = z.strictObject({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(4320) })
export const httpUrl = z.string().max(8192).refine((u) => {
  try {
    return ['http:', 'https:'].includes(new URL(u).protocol)
  } catch {
    return false
  }
}, 'must be an http(s) URL')
export const navigableUrl = z.string().max(8192).refine((u) => {
  try {
    return ['http:', 'https:', 'data:', 'about:'].includes(new URL(u).protocol)
  } catch {
    return false
  }
}, 'must be an http(s), data: or about: URL')
export const selector = z.string().min(1).max(4096)
export const identityRef = z.string().min(1).max(200)
export const networkRef = z.string().min(1).max(200)
export const timeoutMs = z.number().int().min(0).max(120_000)

/** What the journal keeps of a URL: scheme, host and path — never the query or fragment. */
export function journalUrl(u: string): string {
  try {
    const x = new URL(u)
    if (x.protocol === 'data:') return 'data:'
    return `${x.protocol}//${x.host}${x.pathname}`
  } catch {
    return '(invalid)'
  }
}
