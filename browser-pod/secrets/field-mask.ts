// Field masking: from a secure fill onward the field holding the secret renders as
// bullets, so its characters never reach a screenshot, the live view, a recording or a
// person taking over. The fill sets the mask inline; a watcher in an isolated world (page
// scripts can neither see nor disarm it) re-masks before the next paint. Masking is about
// pixels only: the value stays in the DOM, which is why CDP is refused after a fill.
// Design and limits: docs/personas.md#how-the-mask-is-kept
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
