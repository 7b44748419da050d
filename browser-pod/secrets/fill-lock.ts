// The fill/CDP lock (INV-03 at the pod): the sealed fill and a raw CDP client exclude
// each other, here in the pod, so the lock holds whichever api-server replica relays.
// secure_type is refused (409 cdp_connected) while a CDP client is connected; a CDP
// upgrade is refused while a fill runs or once a secret was typed in this session (its
// page may still hold it: session.echoGuard.filled). One count per session of each.
import { errors } from '../../contracts/errors.ts'
import type { Page } from 'playwright-core'
import type { EchoGuard } from './echo-guard.ts'

/** what the secret path sees of a pod session (session.ts holds the echo guard, so secrets/ does not import it back) */
export interface FillSession {
  readonly page: Page
  readonly echoGuard: EchoGuard
}

interface Exclusion {
  clients: number
  fills: number
}

const exclusions = new WeakMap<FillSession, Exclusion>()
const exclusion = (session: FillSession): Exclusion => {
  let e = exclusions.get(session)
  if (!e) exclusions.set(session, (e = { clients: 0, fills: 0 }))
  return e
}

/** A release that takes its count back once, however often it runs. */
function releaseOnce(e: Exclusion, count: keyof Exclusion): () => void {
  let released = false
  return () => {
    if (!released) e[count]--
    released = true
  }
}

/** CDP clients connected to this session now. */
export function cdpClients(session: FillSession): number {
  return exclusions.get(session)?.clients ?? 0
}

/**
 * Called by the secure fill before it looks at the page: refused (409 cdp_connected)
 * while a CDP client is connected; otherwise no CDP client may connect until the
 * returned release runs.
 */
export function beginFill(session: FillSession): () => void {
  const e = exclusion(session)
  if (e.clients > 0) throw errors.cdpConnected()
  e.fills++
  return releaseOnce(e, 'fills')
}

/**
 * Called by the CDP proxy for an upgrade before it dials Chromium: null (refuse it) while
 * a fill runs or once a secret was typed in this session; otherwise the client is counted
 * from now — a fill starting while Chromium answers is refused — until the release runs.
 */
export function beginCdpClient(session: FillSession): (() => void) | null {
  const e = exclusion(session)
  if (e.fills > 0 || session.echoGuard.filled) return null
  e.clients++
  return releaseOnce(e, 'clients')
}
