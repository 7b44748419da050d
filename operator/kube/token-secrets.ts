// The per-pod token Secrets (one per browser pod, key "token"). The token is made
// here, written once into an immutable Secret the pod reads through secretKeyRef, and
// otherwise only held in memory by the runtime (to configure the pod) and read back by
// the api-server's PodDirectory. Never logged, never in an error message.
import { randomBytes } from 'node:crypto'
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node'
import { isNotFound } from '../../ports/errors.ts'
import type { OwnerReference } from '../../ports/ports.ts'
import { DEFAULT_CALL, MERGE_PATCH } from './api-ops.ts'
import { toResourceError } from './errors.ts'
import { TOKEN_KEY, tokenSecretManifest } from './pod-spec.ts'

export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

export function tokenSecretName(podName: string): string {
  return `${podName}-token`
}

export class TokenSecrets {
  private readonly api: CoreV1Api

  private readonly namespace: string
  constructor(
    kc: KubeConfig,
    namespace: string,
  ) {
    this.namespace = namespace
    this.api = kc.makeApiClient(CoreV1Api)
  }

  /** creates the Secret; if it already exists (a retry after a crash) its token is returned instead */
  async create(input: { name: string; podName: string; token: string; labels?: Record<string, string>; owner?: OwnerReference }): Promise<string> {
    const body = tokenSecretManifest({ ...input, namespace: this.namespace }) as V1Secret
    try {
      await this.api.createNamespacedSecret({ namespace: this.namespace, body }, DEFAULT_CALL)
      return input.token
    } catch (err) {
      const mapped = toResourceError(err, 'Secret', input.name)
      if ((mapped as { reason?: string }).reason !== 'AlreadyExists') throw mapped
      const existing = await this.read(input.name)
      if (!existing) throw mapped
      return existing
    }
  }

  /** the token, or undefined when the Secret does not exist */
  async read(name: string): Promise<string | undefined> {
    try {
      const secret = await this.api.readNamespacedSecret({ name, namespace: this.namespace }, DEFAULT_CALL)
      const b64 = secret.data?.[TOKEN_KEY]
      return b64 ? Buffer.from(b64, 'base64').toString('utf8') : undefined
    } catch (err) {
      const mapped = toResourceError(err, 'Secret', name)
      if (isNotFound(mapped)) return undefined
      throw mapped
    }
  }

  /** replace owners and add labels (metadata only: the data is immutable) */
  async setOwner(name: string, owner: OwnerReference, labels?: Record<string, string>): Promise<void> {
    try {
      await this.api.patchNamespacedSecret({ name, namespace: this.namespace, body: { metadata: { ownerReferences: [owner], ...(labels ? { labels } : {}) } } }, MERGE_PATCH)
    } catch (err) {
      throw toResourceError(err, 'Secret', name)
    }
  }

  async delete(name: string): Promise<void> {
    try {
      await this.api.deleteNamespacedSecret({ name, namespace: this.namespace }, DEFAULT_CALL)
    } catch (err) {
      const mapped = toResourceError(err, 'Secret', name)
      if (!isNotFound(mapped)) throw mapped
    }
  }
}
