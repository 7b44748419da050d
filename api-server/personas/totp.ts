// TOTP credentials (RFC 6238): the sealed value is an otpauth://totp/ URI, and what a
// fill types is the code of the moment, computed where the sealed value is opened.
// Neither the seed nor a code is ever returned, logged or audited: the errors below
// name the rule that failed, never a character of the value (the otpauth library's own
// messages can quote one, so they are never passed on).
import { Secret, TOTP, URI } from 'otpauth'
import { errors, type ApiError } from '../../contracts/errors.ts'
import type { CredentialKind } from '../../contracts/operations/personas.ts'

/** What a service may ask for; RFC 6238 allows SHA-1, SHA-256 and SHA-512. */
const ALGORITHMS = new Set(['SHA1', 'SHA256', 'SHA512'])
const DIGITS = { min: 6, max: 10 }
const PERIOD = { min: 1, max: 600 }
/** RFC 4226 §4 asks for at least 128 bits; 80 bits (16 base32 characters) is what many services issue. */
const MIN_SEED_BYTES = 10

const invalid = (why: string): ApiError =>
  errors.invalidRequest(`value: a totp credential takes an otpauth://totp/ URI or a base32 seed; ${why}`)

function parse(value: string): TOTP {
  const trimmed = value.trim()
  let otp: TOTP
  if (/^otpauth:/i.test(trimmed)) {
    if (!/^otpauth:\/\/totp\//i.test(trimmed)) throw invalid('only the totp type is supported')
    let parsed
    try {
      parsed = URI.parse(trimmed)
    } catch {
      throw invalid('the URI could not be read (it needs a label and a secret parameter)')
    }
    if (!(parsed instanceof TOTP)) throw invalid('only the totp type is supported')
    otp = parsed
  } else {
    // a bare seed: spaces and dashes are how services print it for reading aloud
    const seed = trimmed.replace(/[\s-]/g, '').replace(/=+$/, '').toUpperCase()
    if (!/^[A-Z2-7]+$/.test(seed)) throw invalid('a seed is base32 (letters A-Z and digits 2-7)')
    otp = new TOTP({ secret: Secret.fromBase32(seed), algorithm: 'SHA1', digits: 6, period: 30 })
  }
  if (!ALGORITHMS.has(otp.algorithm)) throw invalid('the algorithm must be SHA1, SHA256 or SHA512')
  if (otp.digits < DIGITS.min || otp.digits > DIGITS.max) throw invalid(`digits must be ${DIGITS.min}-${DIGITS.max}`)
  if (otp.period < PERIOD.min || otp.period > PERIOD.max) throw invalid(`the period must be ${PERIOD.min}-${PERIOD.max} seconds`)
  if (otp.secret.bytes.length < MIN_SEED_BYTES) throw invalid('the seed must be at least 16 base32 characters (80 bits)')
  return otp
}

/**
 * The form of a TOTP value that is sealed: one canonical otpauth URI carrying the
 * algorithm, digits and period explicitly, so a fill never guesses a default.
 * Throws a 400 that quotes nothing of the value.
 */
export function canonicalTotp(value: string): string {
  return parse(value).toString()
}

/** The code for `at` (ms since the epoch) from a sealed value canonicalTotp produced. */
export function totpCode(sealedForm: string, at: number): string {
  return parse(sealedForm).generate({ timestamp: at })
}

/** What is sealed for a credential of this kind: the value itself, or the canonical TOTP URI. */
export function valueToSeal(kind: CredentialKind, value: string): string {
  return kind === 'totp' ? canonicalTotp(value) : value
}

/**
 * The fill hook: what is typed for an opened credential. A password types itself; a
 * TOTP credential types the current code and the opened seed is zeroed here, so the
 * seed never goes further than this function. The returned Buffer is the caller's to zero.
 */
export function credentialValueToType(cred: { kind: CredentialKind }, opened: Buffer, now: number): Buffer {
  if (cred.kind !== 'totp') return opened
  try {
    return Buffer.from(totpCode(opened.toString('utf8'), now), 'utf8')
  } finally {
    opened.fill(0)
  }
}
