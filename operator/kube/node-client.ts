// The operator's one call to a browser pod's node API, POST /v1/configure (contract in
// browser-pod/node-api.ts and operator/embedded/node-client.ts), with an outcome the
// Kubernetes runtime can act on: transient failures (connection refused while the pod
// network settles, timeouts, 5xx) are retried; a 4xx is final. A 409 means the pod is
// already configured — pods are single-use and this one carries our session's labels,
// so that is the earlier attempt of ours that succeeded (e.g. before an operator
// restart); GET /healthz confirms it. Nothing here puts the token or the body
// (which may hold auth-state) into an error message.
export interface ConfigureRequest {
  sessionId: string
  egress: { mode: string; declaredHosts: string[] }
  viewport?: { width: number; height: number }
  storageState?: unknown
}

export type ConfigureOutcome = { ok: true } | { ok: false; retryable: boolean; message: string }

export async function configureNodeApi(endpoint: string, token: string, body: ConfigureRequest, timeoutMs: number): Promise<ConfigureOutcome> {
  let res: Response
  try {
    res = await fetch(new URL('/v1/configure', endpoint), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (err) {
    return { ok: false, retryable: true, message: `configure request failed (${err instanceof Error ? err.name : 'error'})` }
  }
  await res.body?.cancel().catch(() => {})
  if (res.ok) return { ok: true }
  if (res.status === 409 && (await alreadyConfigured(endpoint, timeoutMs))) return { ok: true }
  return { ok: false, retryable: res.status >= 500, message: `configure rejected: HTTP ${res.status}` }
}

async function alreadyConfigured(endpoint: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(new URL('/healthz', endpoint), { signal: AbortSignal.timeout(timeoutMs) })
    const body = (await res.json()) as { configured?: unknown }
    return res.ok && body?.configured === true
  } catch {
    return false
  }
}
