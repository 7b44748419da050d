// Bearer routing by prefix: each prefix is checked only against its own kind
// of record. Anything that does not resolve fails closed with one identical 401.
import type { AuthContext } from './context.ts'
import { isApiError } from '../../contracts/errors.ts'

export type BearerResolver = (token: string) => Promise<AuthContext | null>

export class BearerAuth {
  private readonly resolvers = new Map<string, BearerResolver>()

  register(prefix: 'njk_' | 'njo_', resolver: BearerResolver): void {
    this.resolvers.set(prefix, resolver)
  }

  /** null means 401; the caller never learns which check failed */
  async resolve(header: string | undefined): Promise<AuthContext | null> {
    if (!header) return null
    // RFC 7235 §2.1 / RFC 6750 §2.1: the scheme name is case-insensitive, then 1*SP
    const m = /^bearer +([A-Za-z0-9_-]{8,200})$/i.exec(header.trim())
    if (!m) return null
    const token = m[1]
    const resolver = this.resolvers.get(token.slice(0, 4))
    if (!resolver) return null
    try {
      return await resolver(token)
    } catch (e) {
      // a database that does not answer is not a bad token: the caller gets the 503 (and
      // still no access), so a client retries instead of discarding a good credential
      if (isApiError(e) && e.status === 503) throw e
      return null
    }
  }
}
