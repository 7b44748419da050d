// One error catalogue for every door (REST, MCP, the pod API, OAuth, the console, the
// CLI): contracts/errors/catalogue*.ts declares each error once and errors/make.ts derives
// the constructors (`throw errors.sessionNotLive(row.status)`). The rule for codes and
// reasons is errors/rule.ts; bodies never carry a secret value. Table: docs/errors.md
import { ApiError } from './errors/classes.ts'
import { errors } from './errors/make.ts'

export { ApiError, OAuthError, isApiError, isOAuthError, type ErrorBody, type ErrorDetails, type ErrorReply, type OAuthErrorBody, type RpcErrorObject } from './errors/classes.ts'
export { errors, oauthErrors, pageErrors, upgradeErrors, rpcErrors, rpcStatus, upgradeRefusal, isError, keyOf, fromBody, describeError } from './errors/make.ts'
export {
  API_ERRORS, OAUTH_ERRORS, PAGE_ERRORS, UPGRADE_ERRORS, RPC_ERRORS, CATALOGUE, FAMILIES,
  type ApiErrorKey, type OAuthErrorKey, type PageErrorKey, type UpgradeErrorKey, type RpcErrorKey, type Family, type Listed,
} from './errors/catalogue.ts'
export { CODE_STATUS, OAUTH_STATUS, SPEC_FIXED_REASONS, REASON_PATTERN, type ErrorCode, type OAuthErrorCode, type SpecRow } from './errors/rule.ts'

// --- the generic constructors of before the catalogue -----------------------------------
// Kept only so files not yet converted still build; the linter refuses every call outside
// contracts/ as an undeclared error. Use `errors.<key>(…)` instead.

/** @deprecated use errors.invalidRequest(…) or a specific catalogue entry */
export const badRequest = (message: string, reason?: string) => new ApiError(400, 'bad_request', message, reason)
/** @deprecated use errors.unauthorized() */
export const unauthorized = () => errors.unauthorized()
/** @deprecated use a specific catalogue entry */
export const forbidden = (message: string, reason?: string) => new ApiError(403, 'forbidden', message, reason)
/** @deprecated use errors.missingScope(scopes.join(' ')) */
export const missingScope = (scopes: readonly string[]) => errors.missingScope(scopes.join(' '))
/** @deprecated use errors.notFound(kind) */
export const notFound = (kind: string) => errors.notFound(kind)
/** @deprecated use a specific catalogue entry */
export const conflict = (message: string, reason?: string) => new ApiError(409, 'conflict', message, reason)
/** @deprecated use errors.internal() */
export const internal = (message = 'internal error') => new ApiError(500, 'internal', message)
