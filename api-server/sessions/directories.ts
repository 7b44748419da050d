// What session start looks up in other modules, as interfaces (local reach and the
// auth-state store provide them), so neither side imports the other.

export interface ResolvedNetwork { id: string; declaredHosts: string[] }

/** Network lookup inside the caller's org (the local-reach module provides it). */
export interface NetworkDirectory {
  resolve(request: { orgId: string; ref: string }): Promise<ResolvedNetwork | null>
}

/** Captured auth-state versions (the cloak module provides it). */
export interface AuthStateDirectory {
  /** the version to restore (latest when versionId is absent), or null when none exists */
  pick(request: { orgId: string; identityId: string; versionId?: string }): Promise<{ id: string } | null>
}
