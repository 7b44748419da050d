// Field masking (issue #17 item 4): from a secure fill onward, the field holding the
// secret renders masked — bullets, as a password field renders — so the characters never
// reach a screenshot, the live view, a recording or a person taking over. The spec allows
// a filled text/email field to show its value; this goes further.
//
// How. Two layers, both the pod's own doing through Playwright/CDP:
//  1. The fill itself (secure-fill.ts, fillInPage) sets an inline
//     `-webkit-text-security: disc !important` on the element in the same task, right
//     before the text is inserted: there is no frame in which the field shows the value.
//     An inline !important declaration beats every author stylesheet rule, !important or
//     not, in any cascade layer.
//  2. A watcher, armed in the field's document *before* the text is inserted, keeps it so.
//     It runs in an isolated world (CDP Page.addScriptToEvaluateOnNewDocument with a
//     worldName and runImmediately): it shares the DOM with the page but not its globals,
//     so page scripts can neither see its state nor tamper with the built-ins it uses
//     (a page that patched MutationObserver or CSSStyleDeclaration.prototype.setProperty
//     patched its own world only). Its MutationObserver callback runs at the microtask
//     checkpoint after the page's script, i.e. before the next paint, and re-masks:
//       - a masked element whose style or class attribute is rewritten, or whose type is
//         switched (a "show password" toggle included);
//       - any field (input, textarea, contenteditable) inserted into the page that holds
//         the secret: a framework re-render that replaces the element, innerHTML, a clone;
//       - any field found holding it on an `input` event, and in one animation frame after
//         each batch of inserted nodes (a value set by property right after insertion).
//     Registered as a new-document script, it also runs in every later document of the
//     same frame target (a server re-rendering the login form with the username filled in).
//     Why not CDP alone (DOM.setAttributeValue on each change)? A CDP round trip per
//     page mutation arrives after the page may already have painted; the in-page observer
//     reacts before paint. Why not the main world? Page script runs there and could
//     disconnect or starve it.
//
// What the watcher knows of the secret: for each form of it a field can hold (as typed;
// without line breaks, as an input's value sanitisation strips them; trimmed, as an email
// field's does; with no-break spaces as plain spaces), its length and two 32-bit keyed
// rolling hashes (random bases drawn for each fill). No plaintext is sent. A collision
// only masks an innocent field of the same length, never unmasks one.
//
// Masking is sticky: an element once masked stays masked for as long as it exists, even
// if the page clears it. Unmasking could only race the page (clear, then restore the value
// within one frame), and a field that held a credential gains nothing from showing plain
// text later.
//
// What masking does NOT cover (see the report / README):
//  - the value stays in the DOM: page scripts (it is their origin's secret) and any CDP
//    client can read it — which is why CDP is refused once a secret was filled
//    (cdp-proxy.ts); masking is about pixels;
//  - the secret drawn anywhere else than a field holding it: copied into a div, a canvas,
//    the title bar, a datalist/autocomplete popup, a tooltip; perception and the node API
//    still redact text through the echo guard;
//  - fields inside closed shadow roots, and shadow roots attached after the watcher started
//    to elements already present (they are not observed; the fill's own inline style stays
//    unless the page removes it);
//  - a value set by property (no mutation, no input event) on a field that was never
//    masked, later than the animation frame after the field's insertion: it is found at
//    the next insertion's scan or input event only, so it may show until then;
//  - other tabs: the watcher lives in the frame target that was filled;
//  - a CSS transition with transition-behavior: allow-discrete on -webkit-text-security
//    (the transitions origin outranks !important).
import { randomBytes } from 'node:crypto'
import type { CDPSession, Frame, Page } from 'playwright-core'

/** The isolated world's name (what Chromium's DevTools would show; page script never sees it). */
export const MASK_WORLD = '__nightjar_field_mask__'

/** The declaration the fill sets and the watcher keeps. */
export const MASK_PROPERTY = '-webkit-text-security'
export const MASK_VALUE = 'disc'

export interface Fingerprint {
  /** length in UTF-16 code units */
  n: number
  b1: number
  b2: number
  h1: number
  h2: number
}

/** keyed rolling hash over UTF-16 code units, mod 2^32 — the same arithmetic as WATCHER's `hash` */
function hash(s: string, base: number): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, base) + s.charCodeAt(i)) | 0
  return h
}

function oddBase(): number {
  return randomBytes(4).readInt32LE(0) | 1
}

/** The forms of the secret a field can end up holding, fingerprinted. */
export function fingerprints(value: Buffer): Fingerprint[] {
  const raw = value.toString('utf8')
  const noBreaks = raw.replace(/[\r\n]/g, '')
  const forms = new Set([raw, noBreaks, noBreaks.trim(), raw.replace(/\u00a0/g, ' ')])
  forms.delete('')
  const b1 = oddBase()
  const b2 = oddBase()
  return [...forms].map((f) => ({ n: f.length, b1, b2, h1: hash(f, b1), h2: hash(f, b2) }))
}

// The watcher, as source text (not a serialised function: tsx's keepNames would wrap
// nested functions in a helper the page does not have). It runs once per registration:
// the first run in a document sets up the state and observers, later runs add their
// fingerprints and rescan. `__FP__` is replaced by the fingerprints' JSON.
const WATCHER = String.raw`(function (fps) {
  var KEY = '__nightjarFieldMask'
  var g = globalThis
  if (g[KEY]) { g[KEY].add(fps); return }
  var prints = []
  var masked = new WeakSet()
  var observed = new WeakSet()
  var PROP = '-webkit-text-security'
  var FIELDS = 'input, textarea, [contenteditable]'
  var hash = function (s, b) { var h = 0; for (var i = 0; i < s.length; i++) h = (Math.imul(h, b) + s.charCodeAt(i)) | 0; return h }
  var holds = function (v) {
    if (!v) return false
    for (var i = 0; i < prints.length; i++) {
      var p = prints[i]
      if (v.length === p.n && hash(v, p.b1) === p.h1 && hash(v, p.b2) === p.h2) return true
    }
    return false
  }
  var valueOf = function (el) {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) return el.value
    if (el instanceof HTMLElement && el.isContentEditable) return (el.textContent || '').replace(/\u00a0/g, ' ')
    return ''
  }
  var apply = function (el) {
    var s = el.style
    if (!s) return
    if (s.getPropertyValue(PROP) !== 'disc' || s.getPropertyPriority(PROP) !== 'important') s.setProperty(PROP, 'disc', 'important')
  }
  var check = function (el) {
    if (!(el instanceof HTMLElement)) return
    if (masked.has(el)) return apply(el)
    if (holds(valueOf(el))) { masked.add(el); apply(el) }
  }
  var observer = new MutationObserver(function (records) {
    var inserted = false
    for (var i = 0; i < records.length; i++) {
      var r = records[i]
      if (r.type === 'attributes') check(r.target)
      else if (r.type === 'characterData') {
        var host = r.target.parentElement
        while (host && host.parentElement && host.parentElement.isContentEditable) host = host.parentElement
        if (host) check(host)
      } else {
        for (var j = 0; j < r.addedNodes.length; j++) { inserted = true; scan(r.addedNodes[j]) }
        if (r.target instanceof HTMLElement && r.target.isContentEditable) {
          var top = r.target
          while (top.parentElement && top.parentElement.isContentEditable) top = top.parentElement
          check(top)
        }
      }
    }
    // a value set by property right after the insertion: look once more before the next paint
    if (inserted && !pending) { pending = true; requestAnimationFrame(function () { pending = false; fields() }) }
  })
  var pending = false
  var roots = []
  var OPTIONS = { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['style', 'class', 'type', 'value', 'contenteditable'] }
  var watch = function (root) {
    if (observed.has(root)) return
    observed.add(root)
    roots.push(root)
    observer.observe(root, OPTIONS)
  }
  // the fields of every observed root (cheap: the selector engine, no walk)
  var fields = function () {
    for (var i = 0; i < roots.length; i++) {
      var list = roots[i].querySelectorAll(FIELDS)
      for (var j = 0; j < list.length; j++) check(list[j])
    }
  }
  // every field under an inserted node (node included), and every open shadow root on the way
  var scan = function (node) {
    if (!node || (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11)) return
    if (node.nodeType === 1) { check(node); if (node.shadowRoot) { watch(node.shadowRoot); scan(node.shadowRoot) } }
    var all = node.querySelectorAll('*')
    for (var i = 0; i < all.length; i++) {
      var el = all[i]
      if (el.matches(FIELDS)) check(el)
      if (el.shadowRoot) { watch(el.shadowRoot); scan(el.shadowRoot) }
    }
  }
  var onInput = function (e) { var p = e.composedPath && e.composedPath()[0]; if (p) check(p) }
  addEventListener('input', onInput, true)
  addEventListener('change', onInput, true)
  g[KEY] = { add: function (more) { for (var i = 0; i < more.length; i++) prints.push(more[i]); scan(document) } }
  watch(document)
  g[KEY].add(fps)
})(__FP__)`

/** Re-runs the scan in every document of the target (the fill just typed the value). */
const RESCAN = `globalThis.__nightjarFieldMask && globalThis.__nightjarFieldMask.add([])`

const sessions = new WeakMap<Page | Frame, Promise<CDPSession>>()

/**
 * The CDP session whose target holds `frame`'s document: the frame's own when it is an
 * out-of-process iframe (a cross-site login frame), else that of the nearest ancestor
 * that has one, up to the page.
 */
async function sessionFor(frame: Frame): Promise<CDPSession> {
  const page = frame.page()
  for (let f: Frame | null = frame; f; f = f.parentFrame()) {
    const key: Page | Frame = f.parentFrame() ? f : page
    let s = sessions.get(key)
    if (!s) {
      // Page.enable: without it Chromium runs the new-document scripts of this session in
      // the documents existing now (runImmediately) but in no later one (measured, Chromium 156)
      s = (key === page ? page.context().newCDPSession(page) : page.context().newCDPSession(f)).then(async (cdp) => {
        await cdp.send('Page.enable')
        return cdp
      })
      sessions.set(key, s)
      // a frame sharing its parent's process has no session of its own: forget the failure
      s.catch(() => sessions.delete(key))
    }
    try {
      return await s
    } catch {
      if (key === page) throw new Error('no CDP session for the page')
    }
  }
  throw new Error('no CDP session for the frame')
}

export interface ArmedMask {
  /** Call once the value is in the field: the watcher rescans at once (no event needed). */
  rescan(): Promise<void>
}

/**
 * Arms the watcher for this secret in the target holding `frame` (its current documents
 * and every later one), before the page receives the value. Reads `value`, keeps nothing.
 * Throws when the watcher cannot be installed (the caller refuses the fill: it must not
 * type a secret it cannot keep masked).
 */
export async function armFieldMask(frame: Frame, value: Buffer): Promise<ArmedMask> {
  const cdp = await sessionFor(frame)
  const source = WATCHER.replace('__FP__', JSON.stringify(fingerprints(value)))
  await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source, worldName: MASK_WORLD, runImmediately: true })
  return {
    async rescan() {
      // a one-off script: run in the existing documents, then unregistered
      const { identifier } = await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: RESCAN, worldName: MASK_WORLD, runImmediately: true })
      await cdp.send('Page.removeScriptToEvaluateOnNewDocument', { identifier })
    },
  }
}
