// navigate / go_back / reload, and the one place that turns a failed navigation into
// the spec's typed errors. Chromium only sees "the proxy said no"
// (net::ERR_TUNNEL_CONNECTION_FAILED for CONNECT, or the gateway's own response for
// plain HTTP); the gateway's per-host record says why.
import type { Page, Response } from 'playwright-core'
import { ApiError, badRequest } from '../../contracts/errors.ts'
import type { HistoryInput, NavigateInput, NavigateResult } from '../contract.ts'
import { EGRESS_HEADER, type EgressGateway, type EgressRecord } from '../egress-gateway.ts'
import { isTimeout } from '../errors.ts'
import type { PodSession } from '../session.ts'

/** Schemes a caller may navigate to: web pages, and data:/about:blank (no origin, no network). */
export function checkNavigable(raw: string): string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw badRequest('url is not an absolute URL', 'INVALID_URL')
  }
  if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'data:') return u.href
  if (u.href === 'about:blank') return u.href
  throw badRequest(`scheme ${u.protocol} is not allowed`, 'INVALID_URL')
}

export async function navigate(session: PodSession, input: NavigateInput): Promise<NavigateResult> {
  const url = checkNavigable(input.url)
  const page = session.page
  return runNavigation(page, session.gateway, url, () => page.goto(url, { waitUntil: input.waitUntil ?? 'load', timeout: input.timeoutMs }))
}

export async function goBack(session: PodSession, input: HistoryInput): Promise<NavigateResult> {
  const page = session.page
  return runNavigation(page, session.gateway, page.url(), () => page.goBack({ waitUntil: input.waitUntil ?? 'load', timeout: input.timeoutMs }))
}

export async function reload(session: PodSession, input: HistoryInput): Promise<NavigateResult> {
  const page = session.page
  return runNavigation(page, session.gateway, page.url(), () => page.reload({ waitUntil: input.waitUntil ?? 'load', timeout: input.timeoutMs }))
}

export async function runNavigation(
  page: Page,
  gateway: EgressGateway,
  url: string,
  go: () => Promise<Response | null>,
): Promise<NavigateResult> {
  const seq = gateway.seq
  let response: Response | null
  try {
    response = await go()
  } catch (e) {
    await settleErrorPage(page, e)
    throw navigationError(gateway, seq, url, e)
  }
  // Plain HTTP: the gateway answered in place of the origin (its header is never on
  // upstream responses), so the navigation "succeeded" onto the gateway's refusal.
  if (response && response.headers()[EGRESS_HEADER]) {
    const target = hostPort(response.url())
    const rec = target && gateway.lastDecision(target.host, target.port)
    if (rec && rec.outcome !== 'allowed') throw egressError(rec, response.url())
    throw new ApiError(502, 'E_UPSTREAM', `navigation failed at ${response.url()}`, 'NAVIGATION_FAILED')
  }
  return { url: page.url(), title: await page.title(), status: response ? response.status() : null }
}

/**
 * Playwright reports a failed navigation as soon as the request fails, but Chromium
 * then commits its error page (chrome-error://chromewebdata/). A navigation started
 * before that commit would be "interrupted by another navigation", so wait for it.
 * (ERR_ABORTED commits nothing.)
 */
async function settleErrorPage(page: Page, e: unknown): Promise<void> {
  const m = e instanceof Error ? /net::ERR_[A-Z_]+/.exec(e.message)?.[0] : undefined
  if (!m || m === 'net::ERR_ABORTED') return
  await page.waitForURL((u) => u.protocol === 'chrome-error:', { timeout: 2000, waitUntil: 'commit' }).catch(() => {})
}

export function navigationError(gateway: EgressGateway, seq: number, url: string, e: unknown): ApiError {
  if (e instanceof ApiError) return e
  const message = e instanceof Error ? e.message : String(e)
  if (isTimeout(e)) return new ApiError(504, 'E_UPSTREAM', `navigation timed out at ${url}`, 'NAVIGATION_TIMEOUT')
  if (/has been closed/.test(message)) return new ApiError(503, 'unavailable', 'browser is closed', 'BROWSER_CLOSED')
  const netError = /net::ERR_[A-Z_]+/.exec(message)?.[0]

  // Which blocked connection caused it? Prefer the requested host; otherwise (a redirect
  // to another host) the newest refusal since this navigation began, but only when
  // Chromium's error is one the gateway causes.
  const blocked = gateway.recordsSince(seq).filter((r) => r.outcome !== 'allowed')
  const target = hostPort(url)
  const same = (r: EgressRecord) => target !== null && r.host === target.host && r.port === target.port
  let rec = [...blocked].reverse().find(same)
  if (!rec && (netError === 'net::ERR_TUNNEL_CONNECTION_FAILED' || netError === 'net::ERR_PROXY_CONNECTION_FAILED')) rec = blocked.at(-1)
  if (rec) return egressError(rec, same(rec) ? url : `${rec.host}:${rec.port}`)

  return new ApiError(502, 'E_UPSTREAM', `navigation failed: ${netError ?? 'error'} at ${url}`, 'NAVIGATION_FAILED')
}

/** A gateway record as the typed error the spec names. */
export function egressError(rec: EgressRecord, where: string): ApiError {
  if (rec.outcome === 'denied') {
    return new ApiError(403, 'E_REACHABILITY_DENIED', `egress denied: ${rec.host}:${rec.port} (${rec.reason ?? 'policy'})`, rec.reason)
  }
  return new ApiError(502, 'E_UPSTREAM', `navigation failed: ${rec.netError ?? 'net::ERR_CONNECTION_FAILED'} at ${where}`, 'NAVIGATION_FAILED')
}

function hostPort(raw: string): { host: string; port: number } | null {
  try {
    const u = new URL(raw)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
    return { host: u.hostname.toLowerCase().replace(/^\[|\]$/g, ''), port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) }
  } catch {
    return null
  }
}
