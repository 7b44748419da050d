// The node benches' own line to the kube-apiserver (GET, and a pod's status patch, with the
// kubeconfig's token), and the operator's part for the pods they start without one.
import { readFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { openReadinessGate } from '../operator/kube/readiness-gate.ts'
import { progress } from './harness.ts'

export interface KubeClient {
  get(path: string): Promise<any>
  patchStatus(path: string, status: unknown): Promise<any>
}

/**
 * Calls in-process: polling a pod this way costs next to nothing; a kubectl process per poll
 * (as the node bench first did) costs a few hundred ms of CPU on a 2-core machine, taken
 * from the very pod start it measures.
 */
export function kubeClient(kubeconfig: string): KubeClient {
  const text = readFileSync(kubeconfig, 'utf8')
  const field = (name: string) => {
    const v = new RegExp(`^\\s*${name}: (\\S+)$`, 'm').exec(text)?.[1]
    if (!v) throw new Error(`${kubeconfig}: no ${name}`)
    return v
  }
  const server = field('server')
  const ca = readFileSync(field('certificate-authority'))
  const token = field('token')
  const call = (method: string, path: string, body?: unknown) => new Promise<any>((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/strategic-merge-patch+json' } : {}) }
    const req = httpsRequest(server + path, { method, ca, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(Object.assign(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`), { status: res.statusCode }))))
    })
    req.on('error', reject)
    req.end(body ? JSON.stringify(body) : undefined)
  })
  return { get: (path) => call('GET', path), patchStatus: (path, status) => call('PATCH', `${path}/status`, { status }) }
}

/**
 * The operator's part for a pod this bench starts without one: its readiness gate, opened by
 * the operator's own code (operator/kube/readiness-gate.ts) once the pod API answers, so
 * created → Ready includes what it costs on the real node.
 */
export function openGate(kube: KubeClient, ns: string, name: string): void {
  const path = `/api/v1/namespaces/${ns}/pods/${name}`
  void openReadinessGate({
    current: () => kube.get(path).catch((e: { status?: number }) => (e.status === 404 ? undefined : Promise.reject(e))),
    patchStatus: (status) => kube.patchStatus(path, status),
    stopped: () => false,
    now: () => new Date(),
  }).catch((e: Error) => progress(`${name}: readiness gate: ${e.message}`))
}

