// The KMS seam. A provider only ever handles data keys (envelope encryption): secrets
// themselves are sealed locally by the Sealer, so the KMS sees one call per org per
// cache period instead of one per credential.

export type KmsProviderName = 'local' | 'aws'

export interface KmsProvider {
  readonly name: KmsProviderName
  /**
   * A fresh 256-bit data key for the org: its plaintext (the caller zeroes it) and its
   * wrapped form (safe to store). The org id is bound to the wrapped key (AAD or KMS
   * encryption context), so a wrapped key copied to another org does not unwrap.
   */
  generateDataKey(orgId: string): Promise<{ plaintext: Buffer; wrapped: Buffer }>
  /** Unwraps a data key; throws SealError if it was not wrapped for this org. */
  decryptDataKey(orgId: string, wrapped: Buffer): Promise<Buffer>
}

/** Where the wrapped per-org data keys live (Postgres in the server, memory in tests). */
export interface DataKeyStore {
  get(orgId: string): Promise<Buffer | null>
  /**
   * Stores the wrapped key unless the org already has one, and returns the stored one.
   * Under a race between replicas exactly one insert wins and all callers get it.
   */
  putIfAbsent(orgId: string, wrapped: Buffer): Promise<Buffer>
}

/** Data keys and the local master key are AES-256 keys. */
export const DATA_KEY_BYTES = 32
