// Entry point of the KMS layer: pick a provider from configuration.
import { AwsKmsProvider } from './aws.ts'
import { KmsConfigError } from './errors.ts'
import { LocalKmsProvider } from './local.ts'
import type { KmsProvider } from './provider.ts'

export interface KmsConfig {
  provider: 'local' | 'aws' | 'none'
  /** local: path of the 32-byte master key file (created 0600 if absent). */
  keyFile?: string
  /** aws: key id, ARN or alias of a symmetric KMS key. */
  keyId?: string
  /** aws: region (else the SDK's own resolution). */
  region?: string
  /** aws: endpoint override. */
  endpoint?: string
}

/** null for 'none': the Sealer then fails closed with the spec's 500 (ERR-20). */
export function createKmsProvider(cfg: KmsConfig): KmsProvider | null {
  switch (cfg.provider) {
    case 'none':
      return null
    case 'local':
      if (!cfg.keyFile) throw new KmsConfigError('KMS provider "local" needs keyFile')
      return new LocalKmsProvider(cfg.keyFile)
    case 'aws':
      if (!cfg.keyId) throw new KmsConfigError('KMS provider "aws" needs keyId')
      return new AwsKmsProvider({ keyId: cfg.keyId, region: cfg.region, endpoint: cfg.endpoint })
    default:
      throw new KmsConfigError(`unknown KMS provider ${JSON.stringify((cfg as { provider: unknown }).provider)}`)
  }
}

export type { DataKeyStore, KmsProvider, KmsProviderName } from './provider.ts'
export { DATA_KEY_BYTES } from './provider.ts'
export { KmsConfigError, NO_KMS_MESSAGE, noKmsError, SealError, isSealError, type SealFailure } from './errors.ts'
export { LocalKmsProvider } from './local.ts'
export { AwsKmsProvider, type AwsKmsConfig } from './aws.ts'
export { Sealer, type SealContext, type SealerOptions } from './sealer.ts'
export { PgDataKeyStore } from './pg-store.ts'
