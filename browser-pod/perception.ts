// Perception: url, title, the accessibility snapshot of <body>, and the visible text.
// Password values are redacted: Playwright's ariaSnapshot() prints an input's value
// in clear (`- textbox "Password": S3cret`) and even folds it into a label's
// accessible name (`- checkbox "remember S3cret"`), so we collect every password
// field's live value in the same round trip and scrub each rendering of it.
// A field that renders masked is redacted the same way, whatever its type: a text or
// email field the secure fill typed into (field-mask.ts keeps it masked), or one the page
// itself masks with -webkit-text-security. Judged by the computed style, so a page can
// only ever make perception redact more, never less, than the screen shows.
import type { Frame } from 'playwright-core'
import type { NodeOutput } from '../contracts/node-api.ts'
import { actionError } from './errors.ts'
import type { PodSession } from './session.ts'
import { MASK, yamlQuoted } from './echo-guard.ts'

export { MASK }
/** Below this length a value is only redacted where it stands as a textbox value;
 * scrubbing every occurrence of a 1–3 character string would shred the page text. */
const GLOBAL_SCRUB_MIN = 4

interface PageInfo {
  title: string
  text: string
  secrets: string[]
}

export async function perceive(session: PodSession): Promise<NodeOutput<'perceive'>> {
  const page = session.page
  const children = page.frames().filter((f) => f !== page.mainFrame())
  try {
    // All in parallel: the snapshot, then title/text/password values of the main frame,
    // and password values of child frames (only pages with iframes pay for those).
    const [snapshot, info, ...frameSecrets] = await Promise.all([
      page.locator('body').ariaSnapshot(),
      page.mainFrame().evaluate(collectPageInfo),
      ...children.map((f) => secretsOf(f)),
    ])
    const secrets = info.secrets.concat(...frameSecrets)
    return {
      url: page.url(),
      title: info.title,
      snapshot: redact(snapshot, secrets, true),
      text: redact(info.text, secrets, false),
    }
  } catch (e) {
    throw actionError(e, 'perceive')
  }
}

function secretsOf(frame: Frame): Promise<string[]> {
  return frame.evaluate(collectPageInfo).then((i) => i.secrets, () => [])
}

/**
 * Runs in the page. Walks shadow roots too: a password field inside a web component
 * counts. (No nested named functions: tsx's keepNames would wrap them in a helper
 * that does not exist in the page.)
 */
function collectPageInfo(): PageInfo {
  const secrets: string[] = []
  const roots: Array<Document | ShadowRoot> = [document]
  while (roots.length) {
    for (const el of Array.from(roots.pop()!.querySelectorAll('*'))) {
      if (el instanceof HTMLInputElement && el.type === 'password') {
        if (el.value) secrets.push(el.value)
      } else if (((el instanceof HTMLInputElement && /^(text|email|tel|search|url|number)$/.test(el.type)) || el instanceof HTMLTextAreaElement) && el.value) {
        const security = getComputedStyle(el).getPropertyValue('-webkit-text-security')
        if (security && security !== 'none') secrets.push(el.value)
      } else if (el instanceof HTMLElement && el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) {
        const security = getComputedStyle(el).getPropertyValue('-webkit-text-security')
        if (security && security !== 'none') {
          if (el.textContent) secrets.push(el.textContent)
          if (el.innerText && el.innerText !== el.textContent) secrets.push(el.innerText)
        }
      }
      if (el.shadowRoot) roots.push(el.shadowRoot)
    }
  }
  return { title: document.title, text: document.body ? document.body.innerText : '', secrets }
}

// Playwright's snapshot normalises whitespace and YAML-quotes values that need it;
// mirror both so every rendering of a value is found.
function normalizeWhitespace(s: string): string {
  return s.replace(/[\u200b\u00ad]/g, '').replace(/[\r\n\s\t]+/g, ' ').trim()
}


function renderings(value: string): string[] {
  const n = normalizeWhitespace(value)
  const forms = new Set([value, n, `"${yamlQuoted(n)}"`, yamlQuoted(n)])
  forms.delete('')
  // longest first, so a quoted form is replaced whole before its inner text
  return [...forms].sort((a, b) => b.length - a.length)
}

/**
 * Replaces password values in a snapshot (`isSnapshot`) or in visible text. Every
 * value, whatever its length, is masked where it is a textbox's value; values of
 * GLOBAL_SCRUB_MIN or more characters are masked everywhere else too.
 */
export function redact(input: string, secrets: readonly string[], isSnapshot: boolean): string {
  if (!secrets.length || !input) return input
  const unique = [...new Set(secrets)]
  let out = input
  if (isSnapshot) {
    const tails = unique.flatMap(renderings).map((r) => ': ' + r)
    out = out
      .split('\n')
      .map((line) => {
        if (!/^\s*- textbox\b/.test(line)) return line
        const tail = tails.find((t) => line.endsWith(t))
        return tail ? line.slice(0, line.length - tail.length) + ': ' + MASK : line
      })
      .join('\n')
  }
  for (const v of unique) {
    if (normalizeWhitespace(v).length < GLOBAL_SCRUB_MIN) continue
    for (const r of renderings(v)) if (r.length >= GLOBAL_SCRUB_MIN) out = out.split(r).join(MASK)
  }
  return out
}
