// RFC 7386 JSON merge patch — the patch type both adapters speak (the Kubernetes adapter
// sends it as application/merge-patch+json). Objects merge recursively, null deletes a
// key, anything else (arrays included) replaces. Pure: the target is not mutated.

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

export function applyMergePatch<T>(target: T, patch: unknown): T {
  if (!isPlainObject(patch)) return structuredClone(patch) as T
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else if (value === undefined) continue // not JSON; treat as absent
    else out[key] = applyMergePatch(out[key], value)
  }
  return out as T
}

/**
 * The merge patch that turns `from` into `to` at the top level (nested values replace
 * wholesale; keys missing in `to` become null). Used to write a whole status object.
 */
export function topLevelDiff(from: Record<string, unknown> | undefined, to: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {}
  for (const key of Object.keys(from ?? {})) if (!(key in to) || to[key] === undefined) patch[key] = null
  for (const [key, value] of Object.entries(to)) if (value !== undefined) patch[key] = value
  return patch
}
