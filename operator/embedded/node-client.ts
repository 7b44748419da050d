// The one call the operator makes to a browser pod's node API: configure a claimed pod
// for its session. Contract (browser-pod/node-api.ts):
//   POST /v1/configure   Authorization: Bearer <pod token>
//   {sessionId, egress:{mode, declaredHosts}, viewport?, storageState?}   → 2xx
// Error text never includes the token or the body (the body may hold auth-state).
import http from 'node:http'
import type { EgressMode, Viewport } from '../../crds/types.ts'
import type { StorageState } from '../ports.ts'

export interface ConfigureBody {
  sessionId: string
  egress: { mode: EgressMode; declaredHosts: string[] }
  viewport?: Viewport
  storageState?: StorageState
}

/** node:http with a short-lived request: cheaper than fetch for one loopback call on the claim path */
export function configureNode(endpoint: string, token: string, body: ConfigureBody, timeoutMs: number): Promise<void> {
  const payload = Buffer.from(JSON.stringify(body))
  return new Promise<void>((resolve, reject) => {
    const req = http.request(new URL('/v1/configure', endpoint), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': payload.length },
      timeout: timeoutMs,
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', () => reject(new Error('configure request failed: response error')))
      res.on('end', () => {
        const status = res.statusCode ?? 0
        if (status >= 200 && status < 300) return resolve()
        // keep only the error code of the node's {"error":{"code",...}} body
        let code = ''
        try {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: unknown } }
          if (typeof parsed?.error?.code === 'string') code = ` ${parsed.error.code.slice(0, 64)}`
        } catch {
          /* not JSON */
        }
        reject(new Error(`configure rejected: HTTP ${status}${code}`))
      })
    })
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })))
    req.on('error', (err) => reject(new Error(`configure request failed: ${err.name === 'TimeoutError' ? 'TimeoutError' : 'error'}`)))
    req.end(payload)
  }).finally(() => payload.fill(0)) // the body may hold auth-state
}
