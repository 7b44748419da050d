// The one call the operator makes to a browser pod's node API: configure a claimed pod
// for its session. Contract (browser-pod/node-api.ts):
//   POST /v1/configure   Authorization: Bearer <pod token>
//   {sessionId, egress:{mode, declaredHosts}, viewport?, storageState?}   → 2xx
// Error text never includes the token or the body (the body may hold auth-state).
import type { EgressMode, Viewport } from '../../crds/types.ts'
import type { StorageState } from '../ports.ts'

export interface ConfigureBody {
  sessionId: string
  egress: { mode: EgressMode; declaredHosts: string[] }
  viewport?: Viewport
  storageState?: StorageState
}

export async function configureNode(endpoint: string, token: string, body: ConfigureBody, timeoutMs: number): Promise<void> {
  let res: Response
  try {
    res = await fetch(new URL('/v1/configure', endpoint), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (err) {
    throw new Error(`configure request failed: ${err instanceof Error ? err.name : 'error'}`)
  }
  if (res.ok) {
    await res.body?.cancel()
    return
  }
  // keep only the error code of the node's {"error":{"code",...}} body
  let code = ''
  try {
    const parsed = (await res.json()) as { error?: { code?: unknown } }
    if (typeof parsed?.error?.code === 'string') code = ` ${parsed.error.code.slice(0, 64)}`
  } catch {
    /* not JSON */
  }
  throw new Error(`configure rejected: HTTP ${res.status}${code}`)
}
