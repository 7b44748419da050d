// The pod's actions for contracts/operations/drive-mouse.ts: drag, the mouse at viewport
// coordinates (for agents that see a screenshot) and fill_form. Plain values only —
// secrets go through secrets/secure-fill.ts, never through here.
import type { Locator } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import type { FORM_FIELD_KINDS, mouseContracts } from '../../contracts/operations/drive-mouse.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'
import { locate } from './selector.ts'
import type { ActionTable } from './types.ts'

type FieldKind = (typeof FORM_FIELD_KINDS)[number]

export async function drag(session: PodSession, input: PodInput<'drag'>): Promise<PodOutput<'drag'>> {
  const page = session.page
  const from = await locate(page, { selector: input.from, ref: input.fromRef })
  const to = await locate(page, { selector: input.to, ref: input.toRef })
  try {
    await from.dragTo(to)
  } catch (e) {
    throw actionError(e, 'drag')
  }
  return { ok: true, url: page.url() }
}

/** A point must lie inside the viewport: Chromium would dispatch nothing there (or hit whatever scrolled under it). */
function inViewport(session: PodSession, x: number, y: number): void {
  const vp = session.page.viewportSize()
  if (vp && (x >= vp.width || y >= vp.height)) throw errors.outsideViewport(x, y, vp.width, vp.height)
}

export async function mouseClick(session: PodSession, input: PodInput<'mouse_click'>): Promise<PodOutput<'mouse_click'>> {
  const page = session.page
  inViewport(session, input.x, input.y)
  try {
    await page.mouse.click(input.x, input.y, { button: input.button ?? 'left', clickCount: input.clickCount ?? 1 })
  } catch (e) {
    throw actionError(e, 'mouse_click')
  }
  return { ok: true, url: page.url() }
}

export async function mouseMove(session: PodSession, input: PodInput<'mouse_move'>): Promise<PodOutput<'mouse_move'>> {
  const page = session.page
  inViewport(session, input.x, input.y)
  try {
    await page.mouse.move(input.x, input.y, { steps: input.steps ?? 1 })
  } catch (e) {
    throw actionError(e, 'mouse_move')
  }
  return { ok: true, url: page.url() }
}

export async function mouseWheel(session: PodSession, input: PodInput<'mouse_wheel'>): Promise<PodOutput<'mouse_wheel'>> {
  const page = session.page
  if (input.x !== undefined && input.y !== undefined) inViewport(session, input.x, input.y)
  try {
    if (input.x !== undefined && input.y !== undefined) await page.mouse.move(input.x, input.y)
    await page.mouse.wheel(input.deltaX ?? 0, input.deltaY ?? 0)
  } catch (e) {
    throw actionError(e, 'mouse_wheel')
  }
  return { ok: true, url: page.url() }
}

/** What an element is to fill_form, read in the page: a kind it fills, or `unsupported:<what>`. */
function fieldKind(el: Element): string {
  const tag = el.tagName.toLowerCase()
  if (tag === 'textarea') return 'text'
  if (tag === 'select') return 'select'
  if (tag === 'input') {
    const type = (el as HTMLInputElement).type
    if (type === 'checkbox' || type === 'radio') return type
    if (['file', 'submit', 'button', 'reset', 'image', 'hidden', 'range', 'color'].includes(type)) return `unsupported:${type} input`
    return 'text'
  }
  if ((el as HTMLElement).isContentEditable) return 'text'
  return `unsupported:<${tag}> element`
}

type FormValue = PodInput<'fill_form'>['fields'][number]['value']

/** The value a kind takes, or the words for what it takes when `value` is not that. */
function mismatch(kind: FieldKind, value: FormValue): string | null {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? null : 'a string'
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'true or false'
    case 'radio':
      return value === true ? null : 'true (a radio is unchecked by checking another)'
    case 'select':
      return typeof value === 'string' || Array.isArray(value) ? null : 'an option value or label, or a list of them'
  }
}

/**
 * Every field is located and checked (its kind against its value) before any is
 * filled, so a mistake in the fifth field leaves the form untouched.
 */
export async function fillForm(session: PodSession, input: PodInput<'fill_form'>): Promise<PodOutput<'fill_form'>> {
  const page = session.page
  const planned: Array<{ locator: Locator; kind: FieldKind; value: FormValue; selector?: string; ref?: string }> = []
  for (const [index, field] of input.fields.entries()) {
    let locator: Locator
    let kind: string
    try {
      locator = await locate(page, field)
      kind = await locator.evaluate(fieldKind)
    } catch (e) {
      throw actionError(e, `fill_form fields[${index}]`)
    }
    if (kind.startsWith('unsupported:')) throw errors.formFieldUnsupported(index, kind.slice('unsupported:'.length))
    const expected = mismatch(kind as FieldKind, field.value)
    if (expected) throw errors.formValueMismatch(index, kind, expected)
    planned.push({ locator, kind: kind as FieldKind, value: field.value, selector: field.selector, ref: field.ref })
  }
  for (const [index, f] of planned.entries()) {
    try {
      if (f.kind === 'text') await f.locator.fill(f.value as string)
      else if (f.kind === 'select') await f.locator.selectOption(f.value as string | string[])
      else await f.locator.setChecked(f.value as boolean)
    } catch (e) {
      throw actionError(e, `fill_form fields[${index}]`)
    }
  }
  return { ok: true, url: page.url(), fields: planned.map(({ selector, ref, kind }) => (ref === undefined ? { selector, kind } : { ref, kind })) }
}

/** This file's rows of the pod's action table (actions/index.ts). */
export const mouseActions: Pick<ActionTable, (typeof mouseContracts)[number]['name']> = {
  drag,
  mouse_click: mouseClick,
  mouse_move: mouseMove,
  mouse_wheel: mouseWheel,
  fill_form: fillForm,
}
