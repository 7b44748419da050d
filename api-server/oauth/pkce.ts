// PKCE (RFC 7636), S256 only: plain would let whoever sees the authorization request
// redeem the code.
import { createHash } from 'node:crypto'
import { safeEqual } from '../../contracts/ids.ts'

/** an S256 challenge is base64url(SHA-256(verifier)): always 43 characters */
export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/
/** RFC 7636 §4.1: 43-128 characters of [A-Z a-z 0-9 - . _ ~] */
export const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

export function verifyS256(verifier: string, challenge: string): boolean {
  return VERIFIER_PATTERN.test(verifier) && safeEqual(s256(verifier), challenge)
}
