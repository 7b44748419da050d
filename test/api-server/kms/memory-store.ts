// In-memory DataKeyStore and a call-counting provider wrapper for the Sealer tests.
// putIfAbsent yields to the event loop first, so concurrent callers really interleave
// the way replicas racing on the Postgres row do.
import type { DataKeyStore, KmsProvider } from '../../../api-server/kms/provider.ts'

export class MemoryDataKeyStore implements DataKeyStore {
  readonly rows = new Map<string, Buffer>()
  puts = 0

  async get(orgId: string): Promise<Buffer | null> {
    await Promise.resolve()
    return this.rows.get(orgId) ?? null
  }

  async putIfAbsent(orgId: string, wrapped: Buffer): Promise<Buffer> {
    await new Promise((r) => setImmediate(r))
    this.puts++
    if (!this.rows.has(orgId)) this.rows.set(orgId, Buffer.from(wrapped))
    return this.rows.get(orgId)!
  }
}

export class CountingProvider implements KmsProvider {
  generated = 0
  decrypted = 0
  private readonly inner: KmsProvider
  constructor(inner: KmsProvider) {
    this.inner = inner
  }
  get name() {
    return this.inner.name
  }
  generateDataKey(orgId: string) {
    this.generated++
    return this.inner.generateDataKey(orgId)
  }
  decryptDataKey(orgId: string, wrapped: Buffer) {
    this.decrypted++
    return this.inner.decryptDataKey(orgId, wrapped)
  }
}
