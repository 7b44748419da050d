// Text one party writes and a person reads (an agent's reason, a client's or credential's
// name): the person judges the request by it, so it must read as what it is. One rule for
// every door refuses control, format (bidi, zero-width …), separator and invisible-filler
// characters, which hide or reorder text; nothing a name needs is lost. Pages also render
// such text isolated (<bdi>). Rule in full: docs/abuse-limits.md#what-a-person-reads
import { type z } from 'zod'

const HIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029\u034f\u115f\u1160\u3164\uffa0]/u
const HIDDEN_ALL = new RegExp(HIDDEN.source, 'gu')

/** The first character the rule refuses, as "U+202E"; null when the text may be shown. */
export function hiddenCharacter(text: string): string | null {
  const m = HIDDEN.exec(text)
  if (!m) return null
  return 'U+' + m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
}

/**
 * The text with every character the rule refuses written out as `[U+202E]`: for showing a
 * value stored before the rule existed, so a person sees the character instead of its effect.
 */
export function revealHidden(text: string): string {
  return text.replace(HIDDEN_ALL, (c) => '[U+' + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0') + ']')
}

/** The rule's words, value-free (the code point is named, the text is not). */
export function hiddenCharacterMessage(codePoint: string): string {
  return `must not contain control, invisible or text-direction characters (found ${codePoint})`
}

/**
 * A field of text a person reads: the field's own string schema (its lengths, its
 * trimming) with the rule above added, so every door that parses the field applies it.
 */
export function personText<S extends z.ZodString>(field: S): S {
  return field.superRefine((s, ctx) => {
    const c = hiddenCharacter(s)
    if (c) ctx.addIssue({ code: 'custom', message: hiddenCharacterMessage(c) })
  }) as S
}
