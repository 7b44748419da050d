// `aws` provider: AWS KMS generates and unwraps the per-org data keys; the master key
// never leaves KMS. The org id travels as the KMS encryption context, which KMS binds
// into the ciphertext blob and also writes to CloudTrail, so every unwrap is
// attributable to an org.
import { DecryptCommand, GenerateDataKeyCommand, KMSClient, type KMSClientConfig } from '@aws-sdk/client-kms'
import { KmsConfigError, SealError } from './errors.ts'
import { DATA_KEY_BYTES, type KmsProvider } from './provider.ts'

export interface AwsKmsConfig {
  /** Key id, key ARN, alias name or alias ARN of a symmetric KMS key. */
  keyId: string
  /** Falls back to the SDK's own resolution (AWS_REGION, profile) when absent. */
  region?: string
  /** Endpoint override (VPC endpoint, LocalStack, the wire-level test server). */
  endpoint?: string
  /** Static credentials; when absent the SDK's default provider chain is used. */
  credentials?: KMSClientConfig['credentials']
}

// Errors that mean "this blob does not belong here", as opposed to KMS being unreachable.
const UNWRAP_REFUSED = new Set(['InvalidCiphertextException', 'IncorrectKeyException'])

export class AwsKmsProvider implements KmsProvider {
  readonly name = 'aws' as const
  private readonly client: KMSClient
  private readonly keyId: string

  constructor(cfg: AwsKmsConfig) {
    if (!cfg.keyId) throw new KmsConfigError('aws KMS provider needs a key id')
    this.keyId = cfg.keyId
    this.client = new KMSClient({
      ...(cfg.region ? { region: cfg.region } : {}),
      ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
      ...(cfg.credentials ? { credentials: cfg.credentials } : {}),
    })
  }

  async generateDataKey(orgId: string): Promise<{ plaintext: Buffer; wrapped: Buffer }> {
    let out
    try {
      out = await this.client.send(
        new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: context(orgId) }),
      )
    } catch (e) {
      throw new SealError('kms_unavailable', { cause: e })
    }
    const plaintext = takeKey(out.Plaintext)
    if (!out.CiphertextBlob?.length) {
      plaintext.fill(0)
      throw new SealError('kms_unavailable')
    }
    return { plaintext, wrapped: Buffer.from(out.CiphertextBlob) }
  }

  async decryptDataKey(orgId: string, wrapped: Buffer): Promise<Buffer> {
    let out
    try {
      // Naming the key id stops KMS from unwrapping with any other key the role can use.
      out = await this.client.send(
        new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: wrapped, EncryptionContext: context(orgId) }),
      )
    } catch (e) {
      const name = (e as { name?: string }).name ?? ''
      throw new SealError(UNWRAP_REFUSED.has(name) ? 'key_unwrap_failed' : 'kms_unavailable', { cause: e })
    }
    return takeKey(out.Plaintext)
  }

  destroy(): void {
    this.client.destroy()
  }
}

function context(orgId: string): Record<string, string> {
  return { nightjarOrg: orgId }
}

/** Copies the SDK's plaintext into our own Buffer and wipes the SDK's copy. */
function takeKey(p: Uint8Array | undefined): Buffer {
  if (!p || p.length !== DATA_KEY_BYTES) {
    p?.fill(0)
    throw new SealError('kms_unavailable')
  }
  const key = Buffer.from(p)
  p.fill(0)
  return key
}
