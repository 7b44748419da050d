// How page text is written into a snapshot line, and what a masked value reads as. This is
// perception's format; the echo guard (secrets/) fingerprints a secret in these forms too, so
// it imports them from here and never the other way round.

/** What every masked value reads as: a password field's value, and any secret the page echoes. */
export const MASK = '••••••••'

/**
 * Page text as a snapshot line carries it (perception/render.ts): YAML-escaped (yamlQuoted) and
 * with the bracket of any `[ref=` inside written `\x5b`, so text a page controls can never
 * hold a ref token a reader would take for the element's own. Without the quotes around it.
 */
export function snapshotEscaped(s: string): string {
  return yamlQuoted(s).replace(/\[(?=\s*ref\s*=)/gi, '\\x5b')
}

/** Playwright's YAML quoting of a snapshot value; perception/render.ts quotes the same way. */
export function yamlQuoted(s: string): string {
  return s.replace(/[\\"\x00-\x1f\x7f-\x9f]/g, (c) => {
    switch (c) {
      case '\\': return '\\\\'
      case '"': return '\\"'
      case '\b': return '\\b'
      case '\f': return '\\f'
      case '\n': return '\\n'
      case '\r': return '\\r'
      case '\t': return '\\t'
      default: return '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0')
    }
  })
}
