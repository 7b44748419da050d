// The secure fill: type a credential into one field only if the document holding it is on
// the allowlist and the field is editable, checked here at the moment of typing so a
// redirect or a foreign iframe cannot receive the secret. The value is handed only to a
// function bound to the element's own document, which a navigation destroys.
// Design: docs/personas.md#where-the-fill-types
import type { ElementHandle } from 'playwright-core'
import { hostAllowed } from '../../contracts/hosts.ts'
import { ApiError, errors } from '../../contracts/errors.ts'
import type { EditableKind, SecureTypeInput, SecureTypeResult } from '../../contracts/pod-api.ts'
import { isSelectorSyntaxError, isTimeout, selectorProblem } from '../errors.ts'
import { beginFill, type FillSession } from './fill-lock.ts'
import { armFieldMask, MASK_PROPERTY, MASK_VALUE, type ArmedMask } from './field-mask.ts'
import { locateRef } from '../perception/refs.ts'
import { changesAfter } from '../perception/perceive.ts'
import { checkSelector } from '../actions/selector.ts'

interface Inspection {
  href: string
  origin: string
  kind: string
  editable: boolean
}

export async function secureType(session: FillSession, input: SecureTypeInput): Promise<SecureTypeResult> {
  // CDP and the fill exclude each other (cdp-proxy.ts): refused while a CDP client is
  // connected, and no CDP client connects until this fill is over
  const endFill = beginFill(session)
  const value = Buffer.from(input.value, 'base64')
  let handle: ElementHandle | null = null
  try {
    handle = await findTarget(session, input, input.timeoutMs)
    // Fingerprinted (never kept) just before the page gets it: from then on the pod
    // API masks it wherever the page echoes it (echo-guard.ts).
    const filled = await fillElement(handle, input.allowlist, value, () => session.echoGuard.remember(value))
    if (input.changes !== true) return filled
    // read after the value is in and masked: perception redacts it like any password value
    const changes = await changesAfter(session)
    return changes === undefined ? filled : { ...filled, changes }
  } finally {
    // The JS string handed to the page cannot be wiped; the Buffer can, and is.
    value.fill(0)
    endFill()
    void handle?.dispose().catch(() => {}) // the handle dies with its page anyway; never hold the fill up for it
  }
}

async function findTarget(session: FillSession, by: { selector?: string; ref?: string }, timeout?: number): Promise<ElementHandle> {
  let handle: ElementHandle | null
  try {
    // A ref names one element of a document still on the page (or is refused as stale);
    // its frame, whatever its origin, is judged as itself in fillElement below.
    // Strict: a selector matching several elements is refused rather than guessed.
    if (by.ref === undefined) await checkSelector(session.page, by.selector ?? '') // the one selector rule of every element tool
    const locator = by.ref !== undefined ? await locateRef(session.page, by.ref) : session.page.locator(by.selector ?? '')
    handle = await locator.elementHandle({ timeout })
  } catch (e) {
    if (e instanceof ApiError) throw e
    if (isTimeout(e)) throw errors.fillTargetNotFound()
    if (e instanceof Error && /strict mode violation/.test(e.message)) {
      throw errors.ambiguousSelector('')
    }
    // the parser's words, as every other element tool gives them (they name the selector, never the secret)
    throw errors.invalidSelector(e instanceof Error && isSelectorSyntaxError(e.message) ? selectorProblem(e) : '')
  }
  if (!handle) throw errors.fillTargetNotFound()
  return handle
}

/** Checks, then types `value` into the element the handle points at. Exported for tests
 * that hold a handle across a navigation. Does not zero `value` (the caller does).
 * `beforeType` runs once every check has passed, right before the page receives the value. */
export async function fillElement(handle: ElementHandle, allowlist: readonly string[], value: Buffer, beforeType?: () => void): Promise<SecureTypeResult> {
  // 1. Where is the element, right now? Both views must be on the allowlist.
  const [frame, seen] = await Promise.all([handle.ownerFrame().catch(() => null), inspectTarget(handle)])
  if (!frame || frame.isDetached()) throw navigated()
  const live = liveHost(frame.url())
  const inPage = liveHost(seen.href)
  for (const where of [live, inPage]) {
    if (!where || !hostAllowed(where.host, where.port, allowlist)) {
      throw errors.credentialOriginDenied(where?.host ?? '')
    }
  }
  // 2. Is it a field a secret belongs in?
  if (!seen.editable) throw errors.credentialFieldDenied(seen.kind)

  // 3. Arm the mask watcher in the field's frame before the page gets anything: a secret
  // that could not be kept masked is not typed (fail closed).
  let mask: ArmedMask
  try {
    mask = await armFieldMask(frame, value)
  } catch {
    if (frame.isDetached()) throw navigated()
    throw errors.internal()
  }

  // 4. Type, atomically with a re-check of the origin inside the same document.
  let outcome: string
  beforeType?.()
  try {
    outcome = await handle.evaluate(fillInPage, [seen.origin, value.toString('utf8'), MASK_PROPERTY, MASK_VALUE] as [string, string, string, string])
  } catch {
    outcome = 'navigated'
  }
  if (outcome === 'navigated') throw navigated()
  if (outcome !== 'ok') throw errors.credentialFieldDenied(outcome)
  // the watcher finds the field by its value even when no event reached it (a page
  // listener that stopped the input event, a re-render inside the fill's own task)
  await mask.rescan().catch(() => {}) // the fill's inline mask is on already; a frame gone since holds nothing
  return { ok: true, fieldKind: seen.kind as EditableKind, host: live!.host }
}

function navigated(): ApiError {
  return errors.fillNavigated()
}

async function inspectTarget(handle: ElementHandle): Promise<Inspection> {
  try {
    return await handle.evaluate(inspectInPage)
  } catch {
    throw navigated()
  }
}

/** host and effective port of a document URL; null for opaque documents (about:srcdoc, data:). */
export function liveHost(href: string): { host: string; port: number } | null {
  let u: URL
  try {
    u = new URL(href)
  } catch {
    return null
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
  return { host: u.hostname.toLowerCase().replace(/^\[|\]$/g, ''), port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) }
}

// --- functions that run in the element's document ------------------------------------
// `location` is [LegacyUnforgeable]: page script cannot redefine it. (The rest of an
// inspection could be faked by a hostile page, but only by the page on the checked
// origin, which is the intended recipient anyway.)

function inspectInPage(el: Element): Inspection {
  const base = { href: location.href, origin: location.origin }
  const tag = el.tagName.toLowerCase()
  if (tag === 'input') {
    const input = el as HTMLInputElement
    const kind = input.type.toLowerCase()
    if (input.disabled) return { ...base, kind: 'disabled', editable: false }
    if (input.readOnly) return { ...base, kind: 'readonly', editable: false }
    return { ...base, kind, editable: kind === 'text' || kind === 'password' || kind === 'email' }
  }
  if (tag === 'textarea') {
    const ta = el as HTMLTextAreaElement
    if (ta.disabled) return { ...base, kind: 'disabled', editable: false }
    if (ta.readOnly) return { ...base, kind: 'readonly', editable: false }
    return { ...base, kind: 'textarea', editable: true }
  }
  if ((el as HTMLElement).isContentEditable) return { ...base, kind: 'contenteditable', editable: true }
  return { ...base, kind: tag, editable: false }
}

/** Returns 'ok', 'navigated', or a field kind when the element cannot take focus. */
function fillInPage(el: Element, [expectedOrigin, value, maskProperty, maskValue]: [string, string, string, string]): string {
  if (location.origin !== expectedOrigin || !el.isConnected || el.ownerDocument !== document) return 'navigated'
  const target = el as HTMLInputElement | HTMLTextAreaElement | HTMLElement
  target.focus()
  // getRootNode: a field inside a shadow root is that root's activeElement
  if ((target.getRootNode() as Document | ShadowRoot).activeElement !== target) return 'unfocusable'
  // Masked before the value lands, in the same task: no frame shows it (field-mask.ts).
  // Password fields too, so a "show password" toggle that switches the type keeps bullets.
  target.style.setProperty(maskProperty, maskValue, 'important')
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) {
    target.select()
  } else {
    const range = document.createRange()
    range.selectNodeContents(target)
    const sel = window.getSelection()
    sel?.removeAllRanges()
    sel?.addRange(range)
  }
  // insertText fires beforeinput/input like real typing (frameworks see it) and
  // replaces the selection, i.e. any previous content.
  if (!document.execCommand('insertText', false, value)) {
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) {
      const proto = target instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype
      Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(target, value)
    } else {
      target.textContent = value
    }
    target.dispatchEvent(new Event('input', { bubbles: true }))
  }
  return 'ok'
}
