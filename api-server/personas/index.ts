// The personas module's public surface for other modules (sessions, fill, cloak).
export { bindIdentity, BIND_CHECKS, BIND_SCOPES, type StartPath, type BindDeps, type BindInput, type BindResult } from './bind.ts'
export { prepareFill, grantOriginDenied, noCredentialNamed, type FillDeps, type FillRequest, type PreparedFill } from './fill.ts'
export { findFreetextMarker, checkFreetextAllowed, prepareFreetextFill, freetextDenied, type FreetextMarker } from './freetext.ts'
export { acquire, release, isLeased, leaseOf, leaseHeldBy, reapDeadLeases, identityInUse, type Lease } from './leases.ts'
export { leaseTtlSecs, DEFAULT_LEASE_TTL_SECS } from './lease-ttl.ts'
export { AUDIT, auditFill, auditOriginDenied, auditFieldDenied, auditFreetextDenied, auditGrantOriginDenied, type FillAuditRef } from './audit.ts'
export { getGovernance, putGovernance, urlIsAdvisorOrigin, type Governance } from './governance.ts'
export { findIdentity, type Identity } from './identities.ts'
