// Errors of the KMS / sealing layer. Every message here is value-free: it may reach a
// response body or a log, so it names what failed, never a key, a secret or plaintext.
import { API_ERRORS, ApiError, errors } from '../../contracts/errors.ts'

/** The spec's fail-closed error (ERR-20): no provider means nothing is sealed or opened. */
export const NO_KMS_MESSAGE = API_ERRORS.noKms.message
export const noKmsError = () => errors.noKms()

export type SealFailure =
  | 'open_failed' // GCM authentication failed: tampered, or moved to another row/org/kind
  | 'bad_envelope' // not base64, too short, or an unknown version byte
  | 'no_data_key' // opening for an org that never had a data key
  | 'key_unwrap_failed' // the provider refused to unwrap the org's data key
  | 'provider_mismatch' // the stored data key was wrapped by another provider
  | 'kms_unavailable' // the provider could not be reached or refused the call

/** the catalogue error each failure answers with (the body never says which failure) */
const ENTRY: Record<SealFailure, () => ApiError> = {
  open_failed: () => errors.sealedValueUnopenable(),
  bad_envelope: () => errors.sealedValueUnopenable(),
  no_data_key: () => errors.sealedValueUnopenable(),
  key_unwrap_failed: () => errors.dataKeyUnwrapFailed(),
  provider_mismatch: () => errors.dataKeyUnwrapFailed(),
  kms_unavailable: () => errors.kmsUnavailable(),
}

/**
 * A sealing failure at request time. It is an ApiError (500 internal) so that an
 * unhandled one still renders as a value-free body; `failure` is for code and logs
 * and is deliberately kept out of the body (no oracle on why a value did not open).
 */
export class SealError extends ApiError {
  readonly failure: SealFailure
  constructor(failure: SealFailure, options?: { cause?: unknown }) {
    const e = ENTRY[failure]()
    super(e.status, e.code, e.message)
    this.key = e.key
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
