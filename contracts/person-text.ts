// Text that one party writes and a person reads: an agent's reason, a client's name, a
// credential's, identity's, network's or key's name. The person judges the request by
// it, so the text must read as what it is. One rule, here, for every door (REST, MCP,
// the console's forms, OAuth registration and client metadata documents):
//
//   refused: control characters (C0, DEL, C1: line breaks and tabs included), format
//   characters (Unicode category Cf: bidirectional embeddings, overrides and isolates
//   U+202A–U+202E and U+2066–U+2069, the direction marks, zero-width space, joiners,
//   word joiner, soft hyphen, BOM, tag characters, …), the line and paragraph separators
//   (U+2028, U+2029) and the invisible fillers that render as nothing (U+034F, U+115F,
//   U+1160, U+3164, U+FFA0).
//
// Such a character either hides (text that reads as something else) or moves what is
// around it (a right-to-left override reverses the rest of a paragraph). Nothing a name or
// a reason needs is lost: letters of every script, marks, emoji without joiners, spaces.
// Pages also render such text isolated (<bdi>), so even an old row written before this
// rule cannot reorder the page around it.
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
