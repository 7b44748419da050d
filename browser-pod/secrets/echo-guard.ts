// The echo guard: after a secure fill the page may itself move the secret somewhere
// Nightjar reads back (a URL, the title, the console, a dialog), so every string that
// leaves the pod is scanned for the secret's encoded forms and masked. Only keyed
// fingerprints are kept (length, rolling hash, truncated HMAC), never a plaintext form;
// the rolling hash is only a prefilter, every hit is confirmed by the HMAC.
// Design, forms and limits: docs/personas.md#secrets-the-page-echoes
import { createHmac, randomBytes } from 'node:crypto'
import { MASK, snapshotEscaped, yamlQuoted } from '../perception/snapshot-text.ts'

// the mask is perception's (a password field reads the same); re-exported for the guard's readers
export { MASK }

/** Variants shorter than this are not fingerprinted. */
export const MIN_GUARDED_LENGTH = 4
const TAG_BYTES = 16

interface Bucket {
  /** window length, in UTF-16 code units */
  length: number
  /** B^length mod 2^32: the hash of s[i, i+L) is P[i+L] - P[i]·B^L over the prefix hashes P */
  pow: number
  /** rolling hash → truncated HMAC tags (base64) of the variants with that hash */
  tags: Map<number, string[]>
  /** one bit per value of the hash's top 16 bits: the per-position test, before any Map lookup */
  filter: Uint8Array
}

export class EchoGuard {
  // Private fields: not shown by util.inspect, never serialised.
  readonly #key = randomBytes(32)
  /** rolling hash base: random and odd, so the prefilter is keyed too */
  readonly #base = (randomBytes(4).readUInt32LE(0) | 1) >>> 0
  readonly #buckets = new Map<number, Bucket>()
  #count = 0
  #minLength = Infinity
  #filled = false

  /** Number of fingerprints held. */
  get size(): number {
    return this.#count
  }

  /** True once something was remembered (the response boundary skips the walk otherwise). */
  get active(): boolean {
    return this.#count > 0
  }

  /**
   * True once any secret was handed to remember() — even one too short to fingerprint.
   * What a read path that cannot be scanned (a PDF) or a raw channel (CDP) asks: from
   * then on the page may hold a secret.
   */
  get filled(): boolean {
    return this.#filled
  }

  /**
   * Fingerprints a secret that is about to be typed. Reads `secret` and keeps nothing
   * of it but keyed fingerprints; the caller still owns (and zeroes) the Buffer.
   * Returns how many new fingerprints were added.
   */
  remember(secret: Buffer): number {
    this.#filled = true
    // A JS string cannot be wiped; this one (and the variants) go out of scope here.
    const raw = secret.toString('utf8')
    if (raw.length < MIN_GUARDED_LENGTH) return 0
    let added = 0
    for (const v of variants(raw, secret)) {
      if (v.length < MIN_GUARDED_LENGTH) continue
      let bucket = this.#buckets.get(v.length)
      if (!bucket) {
        bucket = { length: v.length, pow: powMod32(this.#base, v.length), tags: new Map(), filter: new Uint8Array(8192) }
        this.#buckets.set(v.length, bucket)
      }
      const h = rollInit(v, 0, v.length, this.#base)
      const tag = this.#tag(v)
      const list = bucket.tags.get(h)
      if (list?.includes(tag)) continue
      if (list) list.push(tag)
      else bucket.tags.set(h, [tag])
      bucket.filter[h >>> 19] |= 1 << ((h >>> 16) & 7)
      this.#count++
      added++
      if (v.length < this.#minLength) this.#minLength = v.length
    }
    return added
  }

  /** `s` with every span that is a remembered variant replaced by MASK (one MASK per run of overlapping or touching spans). */
  redact(s: string): string {
    if (this.#count === 0 || s.length < this.#minLength) return s
    let spans: Array<[number, number]> | undefined
    // prefix hashes, once per string; each length is then one multiply-subtract per position
    const prefix = prefixHashes(s, this.#base)
    for (const bucket of this.#buckets.values()) {
      if (s.length < bucket.length) continue
      const at = candidates(prefix, bucket)
      if (!at) continue
      for (const i of at) {
        const span = s.slice(i, i + bucket.length)
        if (bucket.tags.get(prefix[i + bucket.length] - Math.imul(prefix[i], bucket.pow) | 0)?.includes(this.#tag(span))) {
          (spans ??= []).push([i, i + bucket.length])
        }
      }
    }
    if (!spans) return s
    spans.sort((a, b) => a[0] - b[0] || b[1] - a[1])
    let out = ''
    let at = 0
    let i = 0
    while (i < spans.length) {
      const start = spans[i][0]
      let end = spans[i][1]
      i++
      while (i < spans.length && spans[i][0] <= end) end = Math.max(end, spans[i++][1])
      out += s.slice(at, start) + MASK
      at = end
    }
    return out + s.slice(at)
  }

  /**
   * A copy of a JSON-like value with every string (object keys included) redacted.
   * `opaque` names top-level fields left as they are (binary payloads such as a
   * screenshot's base64 PNG: pixels, not text).
   */
  scrub<T>(value: T, opaque: readonly string[] = []): T {
    if (this.#count === 0) return value
    return this.#walk(value, opaque) as T
  }

  #walk(v: unknown, opaque: readonly string[]): unknown {
    if (typeof v === 'string') return this.redact(v)
    if (v === null || typeof v !== 'object') return v
    if (Array.isArray(v)) return v.map((x) => this.#walk(x, []))
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return this.#walk((v as { toJSON(): unknown }).toJSON(), opaque)
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[this.redact(k)] = opaque.includes(k) ? x : this.#walk(x, [])
    return out
  }

  #tag(s: string): string {
    return createHmac('sha256', this.#key).update(s, 'utf8').digest().subarray(0, TAG_BYTES).toString('base64')
  }
}

/** P[k] = hash of s[0, k), for k = 0..n (mod 2^32). */
function prefixHashes(s: string, B: number): Int32Array {
  const n = s.length
  const p = new Int32Array(n + 1)
  let h = 0
  for (let k = 0; k < n; k++) p[k + 1] = h = (Math.imul(h, B) + s.charCodeAt(k)) | 0
  return p
}

/**
 * Start positions whose window of the bucket's length has a rolling hash the bucket
 * holds (the prefilter: a typed-array bit test per position, the Map only on a hit).
 * A plain function on plain values, so the engine keeps the loop tight.
 */
function candidates(p: Int32Array, bucket: Bucket): number[] | undefined {
  const { tags, pow, filter, length: L } = bucket
  const last = p.length - 1 - L
  let out: number[] | undefined
  for (let i = 0; i <= last; i++) {
    const h = (p[i + L] - Math.imul(p[i], pow)) | 0
    if (filter[h >>> 19] & (1 << ((h >>> 16) & 7)) && tags.has(h)) (out ??= []).push(i)
  }
  return out
}

function rollInit(s: string, from: number, length: number, base: number): number {
  let h = 0
  for (let k = from; k < from + length; k++) h = (Math.imul(h, base) + s.charCodeAt(k)) | 0
  return h
}

function powMod32(base: number, e: number): number {
  let r = 1
  for (let k = 0; k < e; k++) r = Math.imul(r, base)
  return r
}

// --- the variants ----------------------------------------------------------------------

/**
 * The forms in which the secret can come back: each encoding a page, the browser or a
 * common server library writes (measured against Chromium where the browser encodes:
 * URL parser, form submission, serialisation, the console's rendering), each then as
 * Nightjar itself renders page text (as is; whitespace collapsed as document.title and
 * innerText do; as the aria snapshot normalises and YAML-quotes it). Each encoding is one
 * encoder over the whole value — one built-in call of a page (the comment on each line
 * names it); compositions beyond encoding-then-rendering are not derived.
 */
export function variants(raw: string, bytes: Buffer = Buffer.from(raw, 'utf8')): Set<string> {
  const encoded = new Set<string>([raw])
  const add = (v: string) => encoded.add(v)
  const wellFormed = safeWellFormed(raw)
  // JSON string bodies: as JSON.stringify writes them, and ASCII-only (\uXXXX)
  const json = JSON.stringify(raw).slice(1, -1)
  add(json)
  add(json.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')))
  // percent-encodings, upper- and lower-case hex
  const percent = [
    encodeURIComponent(wellFormed), // encodeURIComponent
    encodeURI(wellFormed), // encodeURI (keeps ;,/?:@&=+$# as they are)
    escape(raw), // escape (%XX up to U+00FF, %uXXXX above)
    new URLSearchParams([['', raw]]).toString().slice(1), // application/x-www-form-urlencoded (spaces as +), as a GET form submits it
    percentEncode(bytes, PATH_SET).replace(/\\/g, '/'), // history.pushState / location into the path (Chromium: \ becomes /)
    percentEncode(bytes, SPEC_PATH_SET).replace(/\\/g, '/'), // the same as the WHATWG URL standard (and Node 20's URL) writes it
    percentEncode(bytes, SPEC_PATH_SET_NEW).replace(/\\/g, '/'), // the standard since it added ^ to the path set (Node 24's URL)
    percentEncode(bytes, QUERY_SET), // into the query of a special URL
    percentEncode(bytes, FRAGMENT_SET), // location.hash
  ]
  for (const p of percent) {
    add(p)
    add(p.replace(/%(u[0-9A-F]{4}|[0-9A-F]{2})/g, (m) => m.toLowerCase()))
  }
  // HTML: a server's escaping (&#39; and its other spellings for '), and how the
  // browser serialises text nodes and attribute values (innerHTML / outerHTML)
  const amp = raw.replace(/&/g, '&amp;')
  const full = amp.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
  for (const apos of ['&#39;', '&#x27;', '&#039;', '&apos;']) add(full.replace(/'/g, apos))
  add(amp.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;'))
  add(amp.replace(/"/g, '&quot;').replace(/\u00a0/g, '&nbsp;'))
  add(amp.replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;'))
  add(cssEscape(wellFormed)) // CSS.escape
  // base64 / base64url of the UTF-8 bytes (Uint8Array.prototype.toBase64, btoa of an
  // ASCII value), without padding; and btoa of a Latin-1 value (one byte per character)
  add(bytes.toString('base64').replace(/=+$/, ''))
  add(bytes.toString('base64url'))
  if (/^[\x00-\xff]*$/.test(raw)) add(Buffer.from(raw, 'latin1').toString('base64').replace(/=+$/, ''))
  // hex of the UTF-8 bytes, lower and upper case (Uint8Array.prototype.toHex, a page's hex())
  add(bytes.toString('hex'))
  add(bytes.toString('hex').toUpperCase())
  // the UTF-8 bytes as numbers: String(new TextEncoder().encode(v)) writes "104,117,…",
  // the console shows an array of them as "[104, 117, …]"
  add([...bytes].join(','))
  add([...bytes].join(', '))
  // the characters as a list: String(v.split('')) / String([...v]), and console.log([...v])
  const chars = [...raw]
  add(chars.join(','))
  add(chars.join(', '))
  // case changes and Unicode normalisation: toUpperCase, toLowerCase, normalize(form)
  add(raw.toUpperCase())
  add(raw.toLowerCase())
  for (const form of ['NFC', 'NFD', 'NFKC', 'NFKD']) add(raw.normalize(form))

  const out = new Set<string>()
  for (const e of encoded) {
    out.add(e)
    // document.title and innerText: ASCII whitespace runs collapsed, ends stripped
    out.add(e.replace(/[\t\n\f\r ]+/g, ' ').trim())
    // the aria snapshot: Playwright's own whitespace normalisation, then YAML quoting
    const snap = e.replace(/[\u200b\u00ad]/g, '').replace(/[\r\n\s\t]+/g, ' ').trim()
    out.add(snap)
    out.add(yamlQuoted(snap))
    out.add(snapshotEscaped(snap))
  }
  out.delete('')
  return out
}

/** Percent-encode sets (Chromium's measured, and the URL standard's path set): each also holds C0 controls, DEL and non-ASCII. */
const PATH_SET = new Set(' "#<>?`{}|^'.split('').map((c) => c.charCodeAt(0)))
const SPEC_PATH_SET = new Set(' "#<>?`{}'.split('').map((c) => c.charCodeAt(0)))
const SPEC_PATH_SET_NEW = new Set(' "#<>?`{}^'.split('').map((c) => c.charCodeAt(0)))
const QUERY_SET = new Set(' "#<>\''.split('').map((c) => c.charCodeAt(0)))
const FRAGMENT_SET = new Set(' "<>`'.split('').map((c) => c.charCodeAt(0)))

function percentEncode(bytes: Buffer, set: Set<number>): string {
  let s = ''
  for (const b of bytes) {
    s += b < 0x20 || b > 0x7e || set.has(b) ? '%' + b.toString(16).toUpperCase().padStart(2, '0') : String.fromCharCode(b)
  }
  return s
}

/** CSS.escape as the CSSOM spec serialises an identifier (the page's built-in). */
function cssEscape(s: string): string {
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0) out += '\ufffd'
    else if ((c >= 1 && c <= 0x1f) || c === 0x7f || (c >= 0x30 && c <= 0x39 && (i === 0 || (i === 1 && s.charCodeAt(0) === 0x2d)))) out += '\\' + c.toString(16) + ' '
    else if (i === 0 && c === 0x2d && s.length === 1) out += '\\' + s[i]
    else if (c >= 0x80 || c === 0x2d || c === 0x5f || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) out += s[i]
    else out += '\\' + s[i]
  }
  return out
}

/** encodeURIComponent throws on lone surrogates; the bytes were UTF-8 anyway. */
function safeWellFormed(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
}
