// navigate / go_back / go_forward / reload, and the one place that turns a failed navigation into
// the spec's typed errors. Chromium only sees "the proxy said no"
// (net::ERR_TUNNEL_CONNECTION_FAILED for CONNECT, or the gateway's own response for
// plain HTTP); the gateway's per-host record says why.
import type { Page, Response } from 'playwright-core'
import { ApiError, errors } from '../../contracts/errors.ts'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { EGRESS_HEADER, type EgressGateway, type EgressRecord } from '../egress-gateway.ts'
import type { DenyReason } from '../egress-policy.ts'
import { isTimeout } from '../errors.ts'
import { watchDocuments } from '../perception/page-watch.ts'
import type { PodSession } from '../session.ts'
import type { ActionTable } from './types.ts'

type NavigateResult = PodOutput<'navigate'>

/** Schemes a caller may navigate to: web pages, and data:/about:blank (no origin, no network). */
export function checkNavigable(raw: string): string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw errors.urlNotAbsolute()
  }
  if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'data:') return u.href
  if (u.href === 'about:blank') return u.href
  throw errors.schemeNotAllowed(u.protocol)
}

export async function navigate(session: PodSession, input: PodInput<'navigate'>): Promise<NavigateResult> {
  const url = checkNavigable(input.url)
  const page = session.page
  return runNavigation(page, session.gateway, url, () => page.goto(url, { waitUntil: 'load' }))
}

export async function goBack(session: PodSession): Promise<NavigateResult> {
  const page = session.page
  return runNavigation(page, session.gateway, page.url(), () => page.goBack({ waitUntil: 'load' }))
}

/** go_forward (its row is in tabs.ts, with the other actions of contracts/operations/drive-tabs.ts). */
export async function goForward(session: PodSession): Promise<NavigateResult> {
  const page = session.page
  return runNavigation(page, session.gateway, page.url(), () => page.goForward({ waitUntil: 'load' }))
}

export async function reload(session: PodSession): Promise<NavigateResult> {
  const page = session.page
  return runNavigation(page, session.gateway, page.url(), () => page.reload({ waitUntil: 'load' }))
}

export async function runNavigation(
  page: Page,
  gateway: EgressGateway,
  url: string,
  go: () => Promise<Response | null>,
): Promise<NavigateResult> {
  const seq = gateway.seq
  // the new document is watched from its start: when it settles, and whether it changed since a snapshot
  await watchDocuments(page)
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
    throw errors.navigationFailed('refused by the egress gateway', response.url())
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
  await page.waitForURL((u) => u.protocol === 'chrome-error:', { timeout: 2000, waitUntil: 'commit' }).catch(() => {}) // a short look for Chromium's error page; not seeing one is an answer too
}

export function navigationError(gateway: EgressGateway, seq: number, url: string, e: unknown): ApiError {
  if (e instanceof ApiError) return e
  const message = e instanceof Error ? e.message : String(e)
  if (isTimeout(e)) return errors.navigationTimeout(url)
  if (/has been closed/.test(message)) return errors.browserClosed()
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

  return errors.navigationFailed(netError ?? 'error', url)
}

/** A gateway record as the typed error the spec names. */
export function egressError(rec: EgressRecord, where: string): ApiError {
  // one error whatever the proxy's failure: its cause is in the pod's log only
  if (rec.proxyFailed) return errors.proxyFailed(where)
  if (rec.outcome === 'denied') {
    const reason = (rec.reason ?? 'not_configured') as DenyReason
    return errors.reachabilityDenied(reason, `${rec.host}:${rec.port} (${reason})`)
  }
  return errors.navigationFailed(rec.netError ?? 'net::ERR_CONNECTION_FAILED', where)
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

/** This file's rows of the pod's action table (actions/index.ts). */
export const navigationActions = { navigate, go_back: goBack, reload } satisfies Partial<ActionTable>
