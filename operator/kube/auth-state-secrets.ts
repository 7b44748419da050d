// Warm resume on Kubernetes: the opened auth-state travels from the api-server (which has
// the database and KMS key) to the operator in a per-session Secret, owned by its
// BrowserSession from birth so the garbage collector always takes it. A missing Secret is
// "on its way" until the start timeout. The state is credential-equivalent: never logged,
// never in an error or event. Design: docs/operator.md#warm-resumes-auth-state-hand-over
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node'
import { API_VERSION, BROWSER_SESSION, LABELS, type BrowserSession } from '../../crds/types.ts'
import { isNotFound, NotReadyError } from '../../ports/errors.ts'
import type { AuthStateRequest, AuthStateSource, StorageState } from '../../ports/ports.ts'
import { DEFAULT_CALL } from './api-ops.ts'
import { toResourceError } from './errors.ts'
import { kubeName } from './names.ts'
import { POD_LABELS } from './pod-spec.ts'

/** the Secret's one data key: Playwright's storage state (plus sessionStorage), as JSON */
export const AUTH_STATE_KEY = 'storageState'
export const AUTH_STATE_COMPONENT = 'auth-state'
/** the captured version the Secret holds: the operator uses it only for that version */
export const AUTH_STATE_VERSION_LABEL = 'nightjar.dev/auth-state-version'
/** the api-server writes these Secrets (the operator only reads and deletes them) */
const WRITER = 'nightjar-api-server'

/** one per session, named after its resource (a DNS-1123 name; kubeName is at most 209 characters) */
export function authStateSecretName(sessionId: string): string {
  return `${kubeName(sessionId)}-auth-state`
}

/** immutable (nobody can swap it for another state), owned by the session's resource */
export function authStateSecretManifest(input: { session: BrowserSession; namespace: string; state: StorageState }): V1Secret {
  const { session, state } = input
  const id = session.metadata.name
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: authStateSecretName(id),
      namespace: input.namespace,
      labels: {
        [POD_LABELS.name]: 'nightjar',
        [POD_LABELS.component]: AUTH_STATE_COMPONENT,
        [POD_LABELS.managedBy]: WRITER,
        [LABELS.session]: id,
        [LABELS.org]: session.spec.orgId,
        ...(session.spec.identityId ? { [LABELS.identity]: session.spec.identityId } : {}),
        [AUTH_STATE_VERSION_LABEL]: session.spec.warmResume?.versionId ?? '',
      },
      // no controller/blockOwnerDeletion: nothing waits on this Secret in a foreground
      // deletion, and blockOwnerDeletion would cost the api-server update on
      // browsersessions/finalizers where OwnerReferencesPermissionEnforcement runs
      ownerReferences: [{ apiVersion: API_VERSION, kind: BROWSER_SESSION.kind, name: kubeName(id), uid: session.metadata.uid }],
    },
    type: 'Opaque',
    immutable: true,
    data: { [AUTH_STATE_KEY]: Buffer.from(JSON.stringify(state), 'utf8').toString('base64') },
  }
}

/**
 * The api-server's half: opens a warm-resume session's version with `source` (the database
 * and the KMS) and writes it into the session's Secret. Call it right after creating the
 * resource (the owner must exist to have a uid).
 */
export class AuthStateHandOver {
  private readonly api: CoreV1Api

  private readonly opts: { kc: KubeConfig; namespace: string; source: AuthStateSource }
  constructor(opts: { kc: KubeConfig; namespace: string; source: AuthStateSource }) {
    this.opts = opts
    this.api = opts.kc.makeApiClient(CoreV1Api)
  }

  /** false when the session's version does not exist (any more); true once the Secret is there */
  async handOver(session: BrowserSession): Promise<boolean> {
    const versionId = session.spec.warmResume?.versionId
    if (!versionId) return true
    const state = await this.opts.source.load({ name: session.metadata.name, orgId: session.spec.orgId, identityId: session.spec.identityId, versionId })
    if (!state) return false
    const body = authStateSecretManifest({ session, namespace: this.opts.namespace, state })
    try {
      await this.api.createNamespacedSecret({ namespace: this.opts.namespace, body }, DEFAULT_CALL)
    } catch (err) {
      const mapped = toResourceError(err, 'Secret', body.metadata!.name!)
      // a retried call whose first write landed: the Secret is immutable, the same state
      if ((mapped as { reason?: string }).reason !== 'AlreadyExists') throw mapped
    }
    return true
  }
}

export interface SecretAuthStateSourceOptions {
  kc: KubeConfig
  namespace: string
  /** how long after a session's resource was created its Secret may still be on its way (the start timeout) */
  waitMs: number
  now?: () => number
}

/** The operator's half: reads the session's Secret; needs get and delete on Secrets, nothing else. */
export class SecretAuthStateSource implements AuthStateSource {
  private readonly api: CoreV1Api
  private readonly now: () => number

  private readonly opts: SecretAuthStateSourceOptions
  constructor(opts: SecretAuthStateSourceOptions) {
    this.opts = opts
    this.api = opts.kc.makeApiClient(CoreV1Api)
    this.now = opts.now ?? Date.now
  }

  async load(session: AuthStateRequest): Promise<StorageState | undefined> {
    const name = authStateSecretName(session.name)
    let secret: V1Secret
    try {
      secret = await this.api.readNamespacedSecret({ name, namespace: this.opts.namespace }, DEFAULT_CALL)
    } catch (err) {
      const mapped = toResourceError(err, 'Secret', name)
      if (!isNotFound(mapped)) throw mapped
      // an unknown creation time is not waited on: a session must never wait forever
      const age = this.now() - Date.parse(session.createdAt ?? '')
      if (age < this.opts.waitMs) throw new NotReadyError(`the warm-resume auth-state Secret "${name}" is not there yet`)
      return undefined
    }
    // a Secret for another version is as absent as none
    if (secret.metadata?.labels?.[AUTH_STATE_VERSION_LABEL] !== session.versionId) return undefined
    const b64 = secret.data?.[AUTH_STATE_KEY]
    if (!b64) return undefined
    const plain = Buffer.from(b64, 'base64')
    try {
      const state = JSON.parse(plain.toString('utf8')) as StorageState
      return Array.isArray(state?.cookies) && Array.isArray(state?.origins) ? state : undefined
    } catch {
      // a value that does not parse never will; JSON.parse's message quotes the text, so it is not passed on
      return undefined
    } finally {
      plain.fill(0)
    }
  }

  async release(sessionName: string): Promise<void> {
    const name = authStateSecretName(sessionName)
    try {
      await this.api.deleteNamespacedSecret({ name, namespace: this.opts.namespace }, DEFAULT_CALL)
    } catch (err) {
      const mapped = toResourceError(err, 'Secret', name)
      if (!isNotFound(mapped)) throw mapped
    }
  }
}
