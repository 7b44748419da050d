// Lease TTL (LIM-07): the lesser of one hour and the winning grant's cap.
export const DEFAULT_LEASE_TTL_SECS = 3600

export function leaseTtlSecs(maxSessionDurationSecs: number | null | undefined): number {
  return maxSessionDurationSecs == null ? DEFAULT_LEASE_TTL_SECS : Math.min(DEFAULT_LEASE_TTL_SECS, maxSessionDurationSecs)
}
