// The personas module's public surface for other modules (sessions, cloak; the fill in
// api-server/secrets/ reads the rooms it needs directly).
export { bindIdentity, BIND_CHECKS, BIND_SCOPES, type StartPath, type BindDeps, type BindInput, type BindResult } from './bind.ts'
export { acquire, release, isLeased, leaseOf, leaseHeldBy, reapDeadLeases, identityInUse, type Lease } from './leases.ts'
export { leaseTtlSecs, DEFAULT_LEASE_TTL_SECS } from './lease-ttl.ts'
export { AUDIT, auditFill, auditOriginDenied, auditFieldDenied, auditFreetextDenied, auditGrantOriginDenied, type FillAuditRef } from './audit.ts'
export { getGovernance, putGovernance, urlIsAdvisorOrigin, type Governance } from './governance.ts'
export { findIdentity, type Identity } from './identities.ts'
export { allowedProxy, platformProxy, sealProxyAuth, openProxyAuth, identityDefaultProxy, setIdentityDefaultProxy, type ProxyRequest, type ProxyOwner } from './proxy.ts'
