// An independent TOTP (RFC 6238 over RFC 4226's HOTP), written from the RFCs with
// node:crypto only, so tests check Nightjar's codes (computed with the otpauth package)
// against something that shares no code with it. Also a base32 encoder (RFC 4648) so
// a test can hand the service a seed in the form services print.
import { createHmac } from 'node:crypto'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

export function base32(bytes: Buffer): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31]
  return out
}

/** RFC 4226 §5.3: HMAC over the 8-byte big-endian counter, dynamic truncation, mod 10^digits. */
export function hotp(key: Buffer, counter: bigint, digits: number, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string {
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(counter)
  const mac = createHmac(algorithm, key).update(msg).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const bin = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3]
  return String(bin % 10 ** digits).padStart(digits, '0')
}

/** RFC 6238 §4.2: T = floor((unix time - T0) / X), T0 = 0. */
export function totp(key: Buffer, unixSeconds: number, o: { digits?: number; period?: number; algorithm?: 'sha1' | 'sha256' | 'sha512' } = {}): string {
  return hotp(key, BigInt(Math.floor(unixSeconds / (o.period ?? 30))), o.digits ?? 6, o.algorithm ?? 'sha1')
}
