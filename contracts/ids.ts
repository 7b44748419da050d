// Ids are a prefix plus 128 random bits in base62; tokens are a prefix plus 256
// random bits. Tokens are stored only as SHA-256 and compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export function base62(bytes: Buffer): string {
  let n = BigInt('0x' + (bytes.toString('hex') || '0'))
  let out = ''
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out
    n /= 62n
  }
  return out || '0'
}

export type IdPrefix =
  | 'norg_' | 'nusr_' | 'nagt_' | 'nkey_'
  | 'nident_' | 'ncred_' | 'ngrnt_' | 'nsess_' | 'nnet_' | 'ntok_' | 'niver_' | 'ncli_' | 'ndmn_' | 'naud_' | 'nrch_' | 'nfile_' | 'nrep_' | 'nshr_' | 'ncreq_' | 'nwhk_' | 'nwdl_' | 'nevt_' | 'next_'

/** prefix + 22 base62 characters (128 bits, left-padded so every id has one length) */
export function newId(prefix: IdPrefix): string {
  return prefix + base62(randomBytes(16)).padStart(22, '0')
}

export type TokenPrefix = 'njk_' | 'njo_' | 'njr_' | 'njt_' | 'njs_'

export function newToken(prefix: TokenPrefix): string {
  return prefix + base62(randomBytes(32)).padStart(43, '0')
}

export function sha256(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex')
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  return ab.length === bb.length && timingSafeEqual(ab, bb)
}
