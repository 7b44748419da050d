// Password sign-in with equal work: whether the e-mail is known or not, exactly one
// password verification runs, against the stored hash or against a dummy hash of the
// same cost. Throttling and lockout are the caller's (console/login.ts).
import type { Queryable } from '../store/db.ts'
import { DUMMY_PASSWORD_HASH, verifyPassword } from './passwords.ts'

export type PasswordVerifier = (password: string, storedHash: string) => Promise<boolean>

/**
 * The verifier sign-in uses. A seam for tests (they wrap it to count calls and prove
 * the unknown-account path does the same work); nothing else replaces it.
 */
export const passwordCheck: { verify: PasswordVerifier } = { verify: verifyPassword }

/** Normalised e-mail: trimmed, lower case (how users are stored). */
export function normaliseEmail(v: unknown): string {
  return typeof v === 'string' ? v.trim().toLowerCase().slice(0, 320) : ''
}

/** The user id when the e-mail and password match, else null; always one verification. */
export async function checkPassword(db: Queryable, email: string, password: string, verify: PasswordVerifier = (p, h) => passwordCheck.verify(p, h)): Promise<string | null> {
  const r = await db.query('select id, password_hash from users where email = $1', [email])
  const row = r.rows[0] as { id: string; password_hash: string } | undefined
  const ok = await verify(password, row?.password_hash ?? DUMMY_PASSWORD_HASH)
  return ok && row ? row.id : null
}
