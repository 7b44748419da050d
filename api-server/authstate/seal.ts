// How an auth-state document is bound to its row. The AAD names org, the kind
// 'authstate', identity and version: a sealed state copied to another identity,
// version, org — or passed off as a credential — does not open.
import type { Sealer, SealContext } from '../kms/index.ts'
import { noKmsError } from '../kms/index.ts'

export interface AuthStateRef {
  orgId: string
  identityId: string
  versionId: string
}

/** What a browser pod returns and is configured with: Playwright's state plus sessionStorage. */
export interface AuthStateDocument {
  cookies: Array<Record<string, unknown>>
  origins: Array<{ origin: string; localStorage: Array<{ name: string; value: string }> }>
  sessionStorage: Array<{ origin: string; entries: Array<{ name: string; value: string }> }>
}

export const authStateSealContext = (ref: AuthStateRef): SealContext => ({
  orgId: ref.orgId,
  kind: 'authstate',
  ids: [ref.identityId, ref.versionId],
})

/** Seals the document as JSON; the transient Buffer is zeroed whatever happens. */
export async function sealAuthState(sealer: Sealer, ref: AuthStateRef, doc: AuthStateDocument): Promise<string> {
  if (!sealer.enabled) throw noKmsError() // fail closed: nothing unencrypted is ever stored
  const plain = Buffer.from(JSON.stringify({ cookies: doc.cookies, origins: doc.origins, sessionStorage: doc.sessionStorage }), 'utf8')
  try {
    return await sealer.seal(authStateSealContext(ref), plain)
  } finally {
    plain.fill(0)
  }
}

/** Opens and parses just in time; the plaintext Buffer is zeroed before this returns. */
export async function openAuthState(sealer: Sealer, ref: AuthStateRef, sealed: string): Promise<AuthStateDocument> {
  const plain = await sealer.open(authStateSealContext(ref), sealed)
  try {
    return JSON.parse(plain.toString('utf8')) as AuthStateDocument
  } finally {
    plain.fill(0)
  }
}

/**
 * The hosts a document covers (cookie domains, storage origins' hosts), sorted: what a
 * listing may show. Names and values of cookies and storage entries never leave here.
 */
export function coveredOrigins(doc: AuthStateDocument): string[] {
  const hosts = new Set<string>()
  for (const c of doc.cookies) if (typeof c.domain === 'string' && c.domain) hosts.add(c.domain.replace(/^\./, '').toLowerCase())
  for (const o of [...doc.origins, ...doc.sessionStorage]) {
    try {
      const host = new URL(o.origin).host
      if (host) hosts.add(host.toLowerCase())
    } catch {
      // an opaque origin covers no host
    }
  }
  return [...hosts].sort().slice(0, 200)
}
