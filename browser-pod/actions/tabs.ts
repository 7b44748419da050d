// The pod's actions for contracts/operations/drive-tabs.ts: tabs (the session keeps
// them, session.ts), dialogs (answered as they open, dialogs.ts), the viewport, and
// go_forward (navigation.ts, with go_back).
import type { Page } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'
import type { tabContracts } from '../../contracts/operations/drive-tabs.ts'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { actionError } from '../errors.ts'
import { NAVIGATION_TIMEOUT_MS, type PodSession, type Tab } from '../session.ts'
import { checkNavigable, goForward, runNavigation } from './navigation.ts'
import type { ActionTable } from './types.ts'

type TabsResult = PodOutput<'tab_list'>

/** How long a tab's title may take to read (a page busy in a script answers nothing). */
const TITLE_WAIT_MS = 2000
/**
 * tab_open's one deadline, from the call to its answer, whatever else runs on the session:
 * opening the tab (a renderer, the recorder's attach), the navigation and the tab list share it.
 */
export const TAB_OPEN_DEADLINE_MS = NAVIGATION_TIMEOUT_MS

async function titleOf(page: Page, waitMs = TITLE_WAIT_MS): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([page.title(), new Promise<string>((resolve) => (timer = setTimeout(() => resolve(''), waitMs)))])
  } catch {
    return '' // the tab closed or navigated while it was read: no title to show
  } finally {
    clearTimeout(timer)
  }
}

/** The session's tabs in the order they opened, and the active one (titles read by `deadline`, when given). */
async function tabsOf(session: PodSession, deadline?: number): Promise<TabsResult> {
  await session.settled()
  const active = session.activeTab
  const waitMs = deadline === undefined ? TITLE_WAIT_MS : Math.max(0, Math.min(TITLE_WAIT_MS, deadline - Date.now()))
  const tabs = await Promise.all(session.tabs.map(async (t) => ({ tabId: t.id, url: t.page.url(), title: await titleOf(t.page, waitMs), active: t === active })))
  return { tabs, activeTabId: active.id }
}

export async function tabList(session: PodSession): Promise<TabsResult> {
  void session.page // 409 before configure, like every other route
  return tabsOf(session)
}

export async function tabOpen(session: PodSession, input: PodInput<'tab_open'>): Promise<PodOutput<'tab_open'>> {
  void session.page
  const url = input.url === undefined ? undefined : checkNavigable(input.url)
  const deadline = Date.now() + TAB_OPEN_DEADLINE_MS
  const tab = await openBy(session, deadline, url)
  let status: number | null = null
  // the navigation gets what opening left of the deadline; a url that fails leaves the new
  // tab open (and active) on the error, as navigate does
  const timeout = Math.max(1, deadline - Date.now())
  if (url) status = (await runNavigation(tab.page, session.gateway, url, () => tab.page.goto(url, { waitUntil: 'load', timeout }))).status
  return { ...(await tabsOf(session, deadline)), tabId: tab.id, status }
}

/** A new tab, opened by the deadline; one that opens only after it is closed again (the caller heard it did not). */
async function openBy(session: PodSession, deadline: number, url: string | undefined): Promise<Tab> {
  const opening = session.openTab()
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()))))
  try {
    const tab = await Promise.race([opening, late])
    if (tab) return tab
  } finally {
    clearTimeout(timer)
  }
  // a tab past its deadline is not the caller's: closed as it arrives (a refusal needs nothing closed)
  void opening.then((tab) => tab.page.close()).catch(() => {})
  throw url ? errors.navigationTimeout(url) : errors.actionTimeout('tab_open', 'the new tab to open')
}

export async function tabSelect(session: PodSession, input: PodInput<'tab_select'>): Promise<TabsResult> {
  void session.page
  const tab = session.tab(input.tabId)
  try {
    await session.selectTab(tab)
  } catch (e) {
    throw actionError(e, 'tab_select')
  }
  return tabsOf(session)
}

export async function tabClose(session: PodSession, input: PodInput<'tab_close'>): Promise<PodOutput<'tab_close'>> {
  const tab = input.tabId === undefined ? session.activeTab : session.tab(input.tabId)
  let closed: boolean
  try {
    closed = await session.closeTab(tab)
  } catch (e) {
    throw actionError(e, 'tab_close')
  }
  return { ...(await tabsOf(session)), tabId: tab.id, closed }
}

export function dialogHandle(session: PodSession, input: PodInput<'dialog_handle'>): PodOutput<'dialog_handle'> {
  void session.page
  session.dialogs.arm(input.action, input.promptText)
  return { armed: { action: input.action }, dialogs: session.dialogs.recent }
}

export async function resize(session: PodSession, input: PodInput<'resize'>): Promise<PodOutput<'resize'>> {
  const page = session.page
  const viewport = { width: input.width, height: input.height }
  try {
    await session.resize(viewport)
  } catch (e) {
    throw actionError(e, 'resize')
  }
  return { ok: true, url: page.url(), viewport }
}

export const tabActions: Pick<ActionTable, (typeof tabContracts)[number]['name']> = {
  go_forward: goForward,
  tab_list: tabList,
  tab_open: tabOpen,
  tab_select: tabSelect,
  tab_close: tabClose,
  dialog_handle: dialogHandle,
  resize,
}
