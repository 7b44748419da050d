// scrypt from node:crypto; the stored form carries its parameters so they can change later.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>
const N = 16384, R = 8, P = 1, LEN = 32

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scrypt(password, salt, LEN, { N, r: R, p: P })
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`
}

/**
 * A stored-form hash of a random password nobody knows, with the same parameters as a
 * real one: sign-in verifies an unknown account's attempt against it, so an unknown
 * e-mail costs the same scrypt work as a known one with a wrong password.
 */
export const DUMMY_PASSWORD_HASH = `scrypt$${N}$${R}$${P}$${randomBytes(16).toString('base64')}$${randomBytes(LEN).toString('base64')}`

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, key] = stored.split('$')
  if (alg !== 'scrypt' || !key) return false
  const expected = Buffer.from(key, 'base64')
  const got = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) })
  return timingSafeEqual(got, expected)
}
