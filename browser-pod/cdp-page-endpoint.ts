// Page endpoints (`/v1/cdp?target=<id>`), as Chrome serves /devtools/page/<id>: the client
// is attached to one page through the filter, and reads that page's session only.
import type { RawData } from 'ws'
import type { CdpChannel } from './cdp-pipe.ts'
import type { CdpRequest } from './cdp-messages.ts'

/** What a page endpoint needs of the filter (cdp-proxy.ts CdpFilter): its judgement, and what it makes of the browser's messages. */
export interface PageFilter {
  judge(req: CdpRequest): { forward: CdpRequest } | { refuse: string }
  observe(data: RawData): { toClient: RawData | string | null }
}

export interface PageAttachment {
  targetId: string
  sessionId: string
}

/** The target of a page endpoint (`/v1/cdp?target=<id>`), or undefined for the browser endpoint. */
export function pageTargetOf(url: string | undefined): string | undefined {
  const target = new URL(url ?? '/', 'http://pod').searchParams.get('target')
  return target !== null && /^[A-Za-z0-9._-]{1,100}$/.test(target) ? target : undefined
}

/**
 * Attaches a page endpoint's client to its target through the filter (which learns the
 * targets from getTargets, so Chromium's own pages and unknown ids are refused): the page
 * session, or null when the target is not one this client may reach.
 */
export function attachPage(channel: CdpChannel, filter: PageFilter, targetId: string): Promise<PageAttachment | null> {
  return new Promise((resolve, reject) => {
    const call = (id: number, method: string, params: Record<string, unknown>): boolean => {
      const verdict = filter.judge({ id, method, params })
      if ('refuse' in verdict) return false
      channel.send(JSON.stringify(verdict.forward))
      return true
    }
    channel.onClose = (why) => reject(new Error(why))
    channel.onMessage = (text) => {
      const seen = filter.observe(Buffer.from(text))
      if (seen.toClient === null) return
      const msg = JSON.parse(String(seen.toClient)) as { id?: number; sessionId?: string; result?: { sessionId?: unknown } }
      if (msg.sessionId !== undefined) return
      if (msg.id === 1 && !call(2, 'Target.attachToTarget', { targetId, flatten: true })) resolve(null)
      if (msg.id === 2) resolve(typeof msg.result?.sessionId === 'string' ? { targetId, sessionId: msg.result.sessionId } : null)
    }
    call(1, 'Target.getTargets', {})
  })
}

/**
 * A browser message for a page endpoint's client: its page session's messages without the
 * sessionId (Chromium writes it last), child sessions' as they are, browser-level ones
 * dropped; 'detached' once the page is gone (Chrome closes a page endpoint then).
 */
export function pageMessage(page: PageAttachment, text: string): string | null | 'detached' {
  const own = `,"sessionId":"${page.sessionId}"}`
  if (text.endsWith(own)) return text.slice(0, -own.length) + '}'
  if (/"sessionId":"[^"]{1,200}"\}$/.test(text)) return text
  if (/^\{"method":"Target\.(detachedFromTarget|targetDestroyed)"/.test(text)) {
    const p = (JSON.parse(text) as { params?: { sessionId?: string; targetId?: string } }).params
    if (p?.sessionId === page.sessionId || p?.targetId === page.targetId) return 'detached'
  }
  return null
}
