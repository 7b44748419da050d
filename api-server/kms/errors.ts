// Errors of the KMS / sealing layer. Every message here is value-free: it may reach a
// response body or a log, so it names what failed, never a key, a secret or plaintext.
import { ApiError } from '../../contracts/errors.ts'

/** The spec's fail-closed error (ERR-20): no provider means nothing is sealed or opened. */
export const NO_KMS_MESSAGE = 'credential decryption unavailable: no KMS object store configured'
export const noKmsError = () => new ApiError(500, 'internal', NO_KMS_MESSAGE)

export type SealFailure =
  | 'open_failed' // GCM authentication failed: tampered, or moved to another row/org/kind
  | 'bad_envelope' // not base64, too short, or an unknown version byte
  | 'no_data_key' // opening for an org that never had a data key
  | 'key_unwrap_failed' // the provider refused to unwrap the org's data key
  | 'provider_mismatch' // the stored data key was wrapped by another provider
  | 'kms_unavailable' // the provider could not be reached or refused the call

const MESSAGES: Record<SealFailure, string> = {
  open_failed: 'sealed value could not be opened',
  bad_envelope: 'sealed value could not be opened',
  no_data_key: 'sealed value could not be opened',
  key_unwrap_failed: 'org data key could not be unwrapped',
  provider_mismatch: 'org data key could not be unwrapped',
  kms_unavailable: 'KMS provider unavailable',
}

/**
 * A sealing failure at request time. It is an ApiError (500 internal) so that an
 * unhandled one still renders as a value-free body; `failure` is for code and logs
 * and is deliberately kept out of the body (no oracle on why a value did not open).
 */
export class SealError extends ApiError {
  readonly failure: SealFailure
  constructor(failure: SealFailure, options?: { cause?: unknown }) {
    super(500, 'internal', MESSAGES[failure])
    this.name = 'SealError'
    this.failure = failure
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause
  }
}

export function isSealError(e: unknown): e is SealError {
  return e instanceof SealError
}

/**
 * Misconfiguration found at start-up or first use (bad key file, missing key id).
 * Not an ApiError: its message names server paths meant for the operator, so a
 * request handler must map it to a generic 500 rather than echo it.
 */
export class KmsConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KmsConfigError'
  }
}
