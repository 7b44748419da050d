// Masking secret values in what perception reads: a password field's value, or any field
// the screen shows masked, in every rendering the snapshot may give it. Pure: the values
// come from the snapshot's round trip (snapshot.ts). Why and how: docs/perception.md.
import { MASK, snapshotEscaped, yamlQuoted } from './snapshot-text.ts'

export { MASK }
/** Below this length a value is only redacted where it stands as a textbox value;
 * scrubbing every occurrence of a 1–3 character string would shred the page text. */
const GLOBAL_SCRUB_MIN = 4

/** Whitespace as Playwright's snapshot normalises it (soft hyphens and zero-width spaces dropped). */
export function normalizeWhitespace(s: string): string {
  return s.replace(/[\u200b\u00ad]/g, '').replace(/[\r\n\s\t]+/g, ' ').trim()
}

/** Every form a value may take in a snapshot: raw, whitespace-normalised, YAML-quoted, snapshot-escaped. */
function renderings(value: string): string[] {
  const n = normalizeWhitespace(value)
  const forms = new Set([value, n, `"${yamlQuoted(n)}"`, yamlQuoted(n), `"${snapshotEscaped(n)}"`, snapshotEscaped(n)])
  forms.delete('')
  // longest first, so a quoted form is replaced whole before its inner text
  return [...forms].sort((a, b) => b.length - a.length)
}

/**
 * Replaces secret values in a snapshot (`isSnapshot`) or in visible text. Every
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
