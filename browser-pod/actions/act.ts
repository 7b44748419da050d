// One page action per call: act (click/type/press/goto/scroll), hover, select_option,
// wait_for. Plain text only — secrets go through secrets/secure-fill.ts, never through here.
import type { Locator } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { DEFAULT_VIEWPORT } from '../../contracts/operations/fields.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'
import { locate } from './selector.ts'
import { checkNavigable, runNavigation } from './navigation.ts'
import type { ActionTable } from './types.ts'

type ActInput = PodInput<'act'>

export async function act(session: PodSession, input: ActInput): Promise<PodOutput<'act'>> {
  const page = session.page
  const need = <K extends keyof ActInput>(k: K): NonNullable<ActInput[K]> => {
    const v = input[k]
    if (v === undefined || v === null) throw errors.invalidRequest(`${String(k)}: required for ${input.verb}`)
    return v as NonNullable<ActInput[K]>
  }
  if (input.verb === 'goto') {
    const url = checkNavigable(need('url'))
    const nav = await runNavigation(page, session.gateway, url, () => page.goto(url))
    return { ok: true, verb: 'goto', ...nav }
  }
  const named = input.selector !== undefined || input.ref !== undefined
  if (input.verb === 'click' && !named) throw errors.invalidRequest('ref or selector: required for click')
  // a ref is checked (same document, still on the page) before anything happens
  const element = named ? await locate(page, input) : undefined
  try {
    switch (input.verb) {
      case 'click':
        await element!.click()
        break
      case 'type': {
        const text = need('text')
        // fill() sets the whole value in one protocol call (fast, and what agents mean by
        // "type into"); without an element the text goes to whatever has focus.
        if (element) await element.fill(text)
        else await page.keyboard.insertText(text)
        break
      }
      case 'press':
        if (element) await element.press(need('key'))
        else await page.keyboard.press(need('key'))
        break
      case 'scroll':
        await scroll(session, input, element)
        break
    }
  } catch (e) {
    // a click or a key that makes its own page close (a popup's "done" button) did what it
    // was asked; Playwright reports the page going away under it as an error
    if ((input.verb === 'click' || input.verb === 'press') && page.isClosed() && session.browser.isConnected()) return { ok: true, verb: input.verb, url: page.url() }
    throw actionError(e, input.verb)
  }
  return { ok: true, verb: input.verb, url: page.url() }
}

async function scroll(session: PodSession, input: ActInput, element: Locator | undefined): Promise<void> {
  const page = session.page
  const dir = input.direction
  if (element && !dir) return void (await element.scrollIntoViewIfNeeded())
  const d = dir ?? 'down'
  const by = (w: number, h: number) => ({
    x: d === 'left' ? -w : d === 'right' ? w : 0,
    y: d === 'up' ? -h : d === 'down' ? h : 0,
  })
  if (element) {
    await element.evaluate((el, dd) => {
      const r = { w: el.clientWidth * 0.8, h: el.clientHeight * 0.8 }
      el.scrollBy({ left: dd === 'left' ? -r.w : dd === 'right' ? r.w : 0, top: dd === 'up' ? -r.h : dd === 'down' ? r.h : 0 })
    }, d)
    return
  }
  // One page-sized step (80% of the viewport, like PageDown).
  const vp = page.viewportSize() ?? DEFAULT_VIEWPORT
  const { x, y } = by(vp.width * 0.8, vp.height * 0.8)
  await page.evaluate(([dx, dy]) => window.scrollBy(dx, dy), [x, y] as const)
}

export async function hover(session: PodSession, input: PodInput<'hover'>): Promise<PodOutput<'hover'>> {
  const page = session.page
  const element = await locate(page, input)
  try {
    await element.hover()
  } catch (e) {
    throw actionError(e, 'hover')
  }
  return { ok: true, url: page.url() }
}

export async function selectOption(session: PodSession, input: PodInput<'select_option'>): Promise<PodOutput<'select_option'>> {
  const page = session.page
  const element = await locate(page, input)
  try {
    const selected = await element.selectOption(input.values)
    return { ok: true, url: page.url(), selected }
  } catch (e) {
    throw actionError(e, 'select_option')
  }
}

export async function waitFor(session: PodSession, input: PodInput<'wait_for'>): Promise<PodOutput<'wait_for'>> {
  const page = session.page
  const locator = input.text === undefined ? await locate(page, input) : page.getByText(input.text).first()
  try {
    await locator.waitFor({ state: 'visible', timeout: input.timeoutMs })
  } catch (e) {
    throw actionError(e, 'wait_for')
  }
  return { ok: true, url: page.url() }
}

/** This file's rows of the pod's action table (actions/index.ts). */
export const elementActions = { act, hover, select_option: selectOption, wait_for: waitFor } satisfies Partial<ActionTable>
