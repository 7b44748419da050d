// How a credential value is bound to its row. The AAD names org, identity and
// credential, so a sealed value copied to any other row or org does not open.
import type { Sealer, SealContext } from '../kms/index.ts'
import { noKmsError } from '../kms/index.ts'

export interface CredentialRef {
  orgId: string
  identityId: string
  credentialId: string
}

export const credentialSealContext = (ref: CredentialRef): SealContext => ({
  orgId: ref.orgId,
  kind: 'credential',
  ids: [ref.identityId, ref.credentialId],
})

/** Seals a plaintext string; the transient Buffer is zeroed whatever happens. */
export async function sealCredentialValue(sealer: Sealer, ref: CredentialRef, value: string): Promise<string> {
  // Fail closed before any work: nothing unencrypted may be stored (ERR-20).
  if (!sealer.enabled) throw noKmsError()
  const plain = Buffer.from(value, 'utf8')
  try {
    return await sealer.seal(credentialSealContext(ref), plain)
  } finally {
    plain.fill(0)
  }
}

/** Opens just in time; the caller owns the Buffer and must zero it after use. */
export function openCredentialValue(sealer: Sealer, ref: CredentialRef, sealed: string): Promise<Buffer> {
  return sealer.open(credentialSealContext(ref), sealed)
}
