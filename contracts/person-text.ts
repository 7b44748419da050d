// Text one party writes and a person reads (an agent's reason, a client's or credential's
// name): the person judges the request by it, so it must read as what it is. One rule for
// every door refuses control, format (bidi, zero-width …), separator and blank-rendering
// characters, which hide or reorder text, and text that shows nothing at all; nothing a
// name needs is lost. Pages also render such text isolated (<bdi>).
// Rule in full: docs/abuse-limits.md#what-a-person-reads
import { type z } from 'zod'

/** Refused anywhere: control, format, line and paragraph separators, and characters drawn as nothing (fillers, the Braille blank, Khmer inherent vowels, the null notehead). */
const HIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0\u{1d159}]/u
const HIDDEN_ALL = new RegExp(HIDDEN.source, 'gu')
/** What shows nothing on its own: white space and separators, marks (drawn on a base), default-ignorables, and the blanks above. */
const BLANK_ALL = /[\p{White_Space}\p{Z}\p{M}\p{Default_Ignorable_Code_Point}\u2800\u{1d159}]/gu

const codePoint = (c: string) => 'U+' + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')

/** The first character the rule refuses, as "U+202E"; null when the text may be shown. */
export function hiddenCharacter(text: string): string | null {
  const m = HIDDEN.exec(text)
  return m ? codePoint(m[0]) : null
}

/** Text that is not empty yet has no visible character: only spaces, marks or invisible characters. */
export function isBlank(text: string): boolean {
  return text.length > 0 && text.replace(BLANK_ALL, '') === ''
}

/**
 * The text with every character the rule refuses written out as `[U+202E]` (and, when it
 * would show nothing, every character): for showing a value stored before the rule
 * existed, so a person sees the character instead of its effect.
 */
export function revealHidden(text: string): string {
  if (isBlank(text)) return [...text].map((c) => `[${codePoint(c)}]`).join('')
  return text.replace(HIDDEN_ALL, (c) => `[${codePoint(c)}]`)
}

/** The rule's words, value-free (the code point is named, the text is not). */
export function hiddenCharacterMessage(codePoint: string): string {
  return `must not contain control, invisible or text-direction characters (found ${codePoint})`
}

/** The words for text that shows nothing. */
export const BLANK_TEXT_MESSAGE = 'must contain a visible character (not only spaces or invisible characters)'

/** What the rule says about `text` (a message as above), or null when a person may read it. */
export function personTextProblem(text: string): string | null {
  const c = hiddenCharacter(text)
  if (c) return hiddenCharacterMessage(c)
  return isBlank(text) ? BLANK_TEXT_MESSAGE : null
}

/**
 * A field of text a person reads: the field's own string schema (its lengths, its
 * trimming) with the rule above added, so every door that parses the field applies it.
 */
export function personText<S extends z.ZodString>(field: S): S {
  return field.superRefine((s, ctx) => {
    const problem = personTextProblem(s)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  }) as S
}
