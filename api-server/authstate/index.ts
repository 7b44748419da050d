// Captured auth-state versions (cloak warm resume): capture, listing, and both halves of
// the resume — the api-server's AuthStateDirectory and the operator's AuthStateSource.
export { captureAuthState, AUDIT_CAPTURE } from './capture.ts'
export { PgAuthStateDirectory } from './directory.ts'
export { SealedAuthStateSource, authStateSource } from './source.ts'
export { listVersions, type AuthStateVersionView } from './store.ts'
export { authStateSealContext, coveredOrigins, type AuthStateDocument, type AuthStateRef } from './seal.ts'
