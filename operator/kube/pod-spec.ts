// The browser pod and its token Secret as pure functions, so the manifest is unit-tested
// and schema-validated without a cluster: Pod Security "restricted" plus what Chromium
// needs under it, restartPolicy Never (a restarted browser would not be the same session),
// and the pod token only through secretKeyRef, so it is never in the Pod object.
// Design: docs/operator.md#the-pod-manifest
import { createHash } from 'node:crypto'
import type { BrowserKind } from '../../crds/types.ts'
import type { OwnerReference, Resource } from '../../ports/ports.ts'

export type PodResource = Resource<Record<string, unknown>, PodStatusLike>

export interface PodStatusLike {
  phase?: string
  podIP?: string
  conditions?: { type: string; status: string; reason?: string; message?: string }[]
  containerStatuses?: {
    name: string
    ready?: boolean
    restartCount?: number
    state?: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: { exitCode?: number; reason?: string; message?: string } }
  }[]
  reason?: string
  message?: string
}

/**
 * A browser pod as the operator keeps it: its metadata, and of its spec and status only what
 * pod-state, pod-writes and the pool read (the node, the API port, phase, IP, conditions and
 * the browser container's state). The rest — the server's defaults, volumes, the projected
 * token, images and IDs the kubelet reports — is most of a pod's size, and the pod informer
 * holds one per session: at 10,000 live the leader's heap outgrew 512 MB (bench/README.md).
 * Pods are never written back whole (merge patches only), so nothing dropped here is lost.
 */
export function keptBrowserPod(pod: PodResource): PodResource {
  const spec = (pod.spec ?? {}) as { nodeName?: string; containers?: { name?: string; ports?: { name?: string; containerPort?: number }[] }[] }
  const st = pod.status
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: pod.metadata,
    spec: {
      ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
      containers: (spec.containers ?? []).map((c) => ({ name: c.name, ...(c.ports ? { ports: c.ports.map((p) => ({ name: p.name, containerPort: p.containerPort })) } : {}) })),
    },
    ...(st
      ? {
          status: {
            phase: st.phase,
            podIP: st.podIP,
            reason: st.reason,
            message: st.message,
            conditions: st.conditions?.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
            containerStatuses: st.containerStatuses?.map((c) => ({ name: c.name, ready: c.ready, restartCount: c.restartCount, state: c.state })),
          },
        }
      : {}),
  }
}

/** labels and annotations this runtime puts on browser pods and their Secrets */
export const POD_LABELS = {
  name: 'app.kubernetes.io/name',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  browserKind: 'nightjar.dev/browser-kind',
  /** present (value "warm") only while the pod sits unclaimed in the warm pool */
  pool: 'nightjar.dev/pool',
  /** on token Secrets: the pod the token belongs to */
  pod: 'nightjar.dev/pod',
} as const

export const POD_ANNOTATIONS = {
  /** the Secret holding this pod's token (key "token") */
  tokenSecret: 'nightjar.dev/token-secret',
  /** non-secret launch settings (egress, viewport) as JSON, so a restarted operator can still configure the pod */
  launch: 'nightjar.dev/launch',
  /** "true" once POST /v1/configure succeeded: the pod API serves this session */
  configured: 'nightjar.dev/configured',
  /** digest of the operator's browser-pod settings the pod was made with (podTemplateHash) */
  template: 'nightjar.dev/pod-template',
  /** what isolates the pod's pages, as it answered configure (browser-pod/sandbox.ts) */
  sandbox: 'nightjar.dev/sandbox',
  /** set when the runtime gave up on the pod (e.g. ConfigureFailed); the pod is then Failed */
  failureReason: 'nightjar.dev/failure-reason',
  failureMessage: 'nightjar.dev/failure-message',
} as const

export const BROWSER_COMPONENT = 'browser-pod'
export const TOKEN_COMPONENT = 'node-token'
export const MANAGED_BY = 'nightjar-operator'
export const CONTAINER_NAME = 'browser'
export const POD_API_PORT_NAME = 'node-api'
export const TOKEN_KEY = 'token'

/** selects every browser pod this operator manages (pool and session pods) */
export const BROWSER_POD_SELECTOR = `${POD_LABELS.component}=${BROWSER_COMPONENT},${POD_LABELS.managedBy}=${MANAGED_BY}`

export interface ResourceList {
  cpu?: string
  memory?: string
  'ephemeral-storage'?: string
}

export interface BrowserPodOptions {
  /** the headless browser-pod image (docker/browser-pod.Dockerfile) */
  image: string
  /** the image of browserKind cloak pods, with full Chromium and Xvfb (docker/browser-pod-cloak.Dockerfile); unset: `image` */
  cloakImage?: string
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never'
  /** the pod API port inside the pod (default 8090) */
  podApiPort?: number
  /** address the pod API binds: '0.0.0.0' (default) or '::' on IPv6 clusters */
  listenHost?: string
  resources?: { requests?: ResourceList; limits?: ResourceList }
  /** size of the memory-backed /dev/shm (default 1Gi; counts against the memory limit) */
  shmSize?: string
  /** size limits of the writable /tmp and home emptyDirs (default 1Gi each) */
  tmpSize?: string
  homeSize?: string
  uid?: number
  serviceAccountName?: string
  runtimeClassName?: string
  /** Chromium's sandbox (default) or none: NIGHTJAR_BROWSER_SANDBOX of the pod */
  sandbox?: 'chromium' | 'none'
  /**
   * The pod's seccomp profile. Default: with the sandbox on, the chart's Localhost profile
   * (RuntimeDefault plus the namespaces Chromium's sandbox creates); off, RuntimeDefault.
   */
  seccompProfile?: SeccompProfile
  priorityClassName?: string
  nodeSelector?: Record<string, string>
  tolerations?: Record<string, unknown>[]
  /** a Pod's spec.affinity, as is */
  affinity?: Record<string, unknown>
  /**
   * spec.topologySpreadConstraints. Unset: DEFAULT_SPREAD (a soft spread over nodes, so a
   * lost node takes as few sessions as possible); [] turns spreading off.
   */
  topologySpreadConstraints?: Record<string, unknown>[]
  imagePullSecrets?: string[]
  /** extra labels/annotations for every browser pod (e.g. for a mesh or cost tracking) */
  podLabels?: Record<string, string>
  podAnnotations?: Record<string, string>
  /** egress deny floor the gateway applies on top of its built-in ranges (NIGHTJAR_DENY_CIDRS) */
  denyCidrs?: string[]
  /** NIGHTJAR_HOST_ALIASES for the egress gateway */
  hostAliases?: Record<string, string>
  chromiumPath?: string
  /** the api-server's egress relay (/ws/egress) for local/split egress */
  tunnelUrl?: string
  /** tracing settings the pod is started with (telemetry/tracing.ts POD_TRACING_ENV: the operator's own, never headers) */
  tracingEnv?: Record<string, string>
  /** default 10 s: the browser pod closes Chromium on SIGTERM within a few seconds */
  terminationGracePeriodSeconds?: number
}

export const DEFAULT_POD_API_PORT = 8090

/**
 * Browser pods (warm and claimed alike) spread over nodes as evenly as the scheduler can,
 * but never wait for it (ScheduleAnyway): one node still runs everything when it is all
 * there is. Spread, a lost node takes the fewest sessions with it, and the warm pool
 * survives on the others.
 */
export const DEFAULT_SPREAD: Record<string, unknown>[] = [
  {
    maxSkew: 1,
    topologyKey: 'kubernetes.io/hostname',
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: { [POD_LABELS.component]: BROWSER_COMPONENT, [POD_LABELS.managedBy]: MANAGED_BY } },
  },
]

export type SeccompProfile = { type: 'RuntimeDefault' | 'Unconfined' } | { type: 'Localhost'; localhostProfile: string }

/** where the chart's DaemonSet puts the profile, under the kubelet's seccomp root (charts/nightjar/files/) */
export const CHROMIUM_SECCOMP_PROFILE: SeccompProfile = { type: 'Localhost', localhostProfile: 'nightjar/chromium-sandbox.json' }

export function seccompProfileFor(opts: Pick<BrowserPodOptions, 'sandbox' | 'seccompProfile'>): SeccompProfile {
  if (opts.seccompProfile) return opts.seccompProfile
  return (opts.sandbox ?? 'chromium') === 'chromium' ? CHROMIUM_SECCOMP_PROFILE : { type: 'RuntimeDefault' }
}

export interface BrowserPodInput {
  name: string
  namespace: string
  browserKind: BrowserKind
  tokenSecretName: string
  /** session labels (org, agent, session, identity) for a session pod; none for a pool pod */
  labels?: Record<string, string>
  /** the BrowserSession, for a pod started for a session (pool pods have no owner until claimed) */
  owner?: OwnerReference
  /** a warm-pool pod: labelled nightjar.dev/pool=warm */
  pool?: boolean
  /** non-secret launch settings, recorded as an annotation */
  launch?: object
  /** nodes the pod must not be scheduled on (ones the operator knows are lost or draining) */
  avoidNodes?: string[]
  /** a chromium session that loads extensions: the cloak image's full Chromium, run headless (docs/extensions.md) */
  fullBrowser?: boolean
}

/**
 * A digest of the settings every browser pod is made from: a warm pod made under other
 * settings (before an upgrade changed the image, the runtime class or the sandbox) is
 * never handed to a session, but replaced.
 */
export function podTemplateHash(opts: BrowserPodOptions): string {
  const stable = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, stable(x)]))
      : Array.isArray(v) ? v.map(stable) : v
  return createHash('sha256').update(JSON.stringify(stable(opts))).digest('hex').slice(0, 16)
}

/** the image a pod runs: cloak, and a session that loads extensions, need the full browser; the rest the headless shell */
export function imageFor(kind: BrowserKind, opts: Pick<BrowserPodOptions, 'image' | 'cloakImage'>, fullBrowser = false): string {
  return (kind === 'cloak' || fullBrowser) && opts.cloakImage ? opts.cloakImage : opts.image
}

/** the full Chromium of the cloak image (docker/browser-pod-cloak.Dockerfile) */
export const FULL_CHROMIUM_PATH = '/usr/bin/chromium'

export function podApiPortOf(opts: BrowserPodOptions): number {
  return opts.podApiPort ?? DEFAULT_POD_API_PORT
}

export function browserPodManifest(input: BrowserPodInput, opts: BrowserPodOptions): PodResource {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: podLabels(input, opts),
      annotations: podAnnotations(input, opts),
      ...(input.owner ? { ownerReferences: [{ ...input.owner }] } : {}),
    } as PodResource['metadata'],
    spec: podSpec(input, opts),
  }
}

/** the pod's environment: its token from the Secret, never a value in the manifest */
function podEnv(input: BrowserPodInput, opts: BrowserPodOptions): Record<string, unknown>[] {
  const env: Record<string, unknown>[] = [
    { name: 'NIGHTJAR_POD_TOKEN', valueFrom: { secretKeyRef: { name: input.tokenSecretName, key: TOKEN_KEY } } },
    { name: 'NIGHTJAR_POD_HOST', value: opts.listenHost ?? '0.0.0.0' },
    { name: 'NIGHTJAR_POD_PORT', value: String(podApiPortOf(opts)) },
    { name: 'NIGHTJAR_BROWSER_KIND', value: input.browserKind },
    { name: 'NIGHTJAR_BROWSER_SANDBOX', value: opts.sandbox ?? 'chromium' },
    { name: 'NIGHTJAR_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'HOME', value: '/home/nightjar' },
    { name: 'TMPDIR', value: '/tmp' },
  ]
  if (opts.denyCidrs?.length) env.push({ name: 'NIGHTJAR_DENY_CIDRS', value: opts.denyCidrs.join(',') })
  if (opts.hostAliases && Object.keys(opts.hostAliases).length) env.push({ name: 'NIGHTJAR_HOST_ALIASES', value: JSON.stringify(opts.hostAliases) })
  // extensions need the full browser; without a cloak image the pod keeps the shell and refuses them (503 extensions_unsupported)
  if (input.fullBrowser && opts.cloakImage) env.push({ name: 'NIGHTJAR_CHROMIUM_PATH', value: FULL_CHROMIUM_PATH })
  else if (opts.chromiumPath) env.push({ name: 'NIGHTJAR_CHROMIUM_PATH', value: opts.chromiumPath })
  if (opts.tunnelUrl) env.push({ name: 'NIGHTJAR_TUNNEL_URL', value: opts.tunnelUrl })
  for (const [name, value] of Object.entries(opts.tracingEnv ?? {}).sort(([a], [b]) => a.localeCompare(b))) env.push({ name, value })
  return env
}

function podLabels(input: BrowserPodInput, opts: BrowserPodOptions): Record<string, string> {
  return {
    ...opts.podLabels,
    ...input.labels,
    [POD_LABELS.name]: 'nightjar',
    [POD_LABELS.component]: BROWSER_COMPONENT,
    [POD_LABELS.managedBy]: MANAGED_BY,
    [POD_LABELS.browserKind]: input.browserKind,
    ...(input.pool ? { [POD_LABELS.pool]: 'warm' } : {}),
  }
}

function podAnnotations(input: BrowserPodInput, opts: BrowserPodOptions): Record<string, string> {
  return {
    ...opts.podAnnotations,
    [POD_ANNOTATIONS.tokenSecret]: input.tokenSecretName,
    [POD_ANNOTATIONS.template]: podTemplateHash(opts),
    ...(input.launch ? { [POD_ANNOTATIONS.launch]: JSON.stringify(input.launch) } : {}),
  }
}

function podSpec(input: BrowserPodInput, opts: BrowserPodOptions): Record<string, unknown> {
  const uid = opts.uid ?? 10001
  const seccomp = seccompProfileFor(opts)
  const spec: Record<string, unknown> = {
    restartPolicy: 'Never',
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: opts.terminationGracePeriodSeconds ?? 10,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: uid,
      fsGroup: uid,
      seccompProfile: structuredClone(seccomp),
    },
    containers: [browserContainer(input, opts, seccomp)],
    volumes: [
      { name: 'tmp', emptyDir: { sizeLimit: opts.tmpSize ?? '1Gi' } },
      { name: 'home', emptyDir: { sizeLimit: opts.homeSize ?? '1Gi' } },
      { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: opts.shmSize ?? '1Gi' } },
    ],
  }
  return { ...spec, ...podScheduling(input, opts) }
}

function browserContainer(input: BrowserPodInput, opts: BrowserPodOptions, seccomp: unknown): Record<string, unknown> {
  return {
    name: CONTAINER_NAME,
    image: imageFor(input.browserKind, opts, input.fullBrowser),
    imagePullPolicy: opts.imagePullPolicy ?? 'IfNotPresent',
    ports: [{ name: POD_API_PORT_NAME, containerPort: podApiPortOf(opts), protocol: 'TCP' }],
    env: podEnv(input, opts),
    resources: opts.resources ?? { requests: { cpu: '100m', memory: '384Mi' }, limits: { memory: '2Gi' } },
    securityContext: {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: structuredClone(seccomp),
    },
    // Readiness alone, each second, gates "pod API up"; five misses in a row mark the pod
    // unready. No startup probe: the kubelet starts readiness only on the period after
    // startup passed, which cost 0.6 s p50 of created → Ready (bench/README.md). A pod
    // that never comes up is the operator's: StartTimeout, for a session's pod and a pool's.
    readinessProbe: { httpGet: { path: '/healthz', port: POD_API_PORT_NAME, scheme: 'HTTP' }, periodSeconds: 1, failureThreshold: 5, timeoutSeconds: 2 },
    volumeMounts: [
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'home', mountPath: '/home/nightjar' },
      { name: 'dshm', mountPath: '/dev/shm' },
    ],
  }
}

/** where the pod may run and with what: the settings' choices, and the nodes to avoid */
function podScheduling(input: BrowserPodInput, opts: BrowserPodOptions): Record<string, unknown> {
  const spec: Record<string, unknown> = {}
  if (opts.serviceAccountName) spec.serviceAccountName = opts.serviceAccountName
  if (opts.runtimeClassName) spec.runtimeClassName = opts.runtimeClassName
  if (opts.priorityClassName) spec.priorityClassName = opts.priorityClassName
  if (opts.nodeSelector && Object.keys(opts.nodeSelector).length) spec.nodeSelector = { ...opts.nodeSelector }
  if (opts.tolerations?.length) spec.tolerations = structuredClone(opts.tolerations)
  const affinity = withAvoidedNodes(opts.affinity, input.avoidNodes ?? [])
  if (affinity) spec.affinity = affinity
  const spread = opts.topologySpreadConstraints ?? DEFAULT_SPREAD
  if (spread.length) spec.topologySpreadConstraints = structuredClone(spread)
  if (opts.imagePullSecrets?.length) spec.imagePullSecrets = opts.imagePullSecrets.map((name) => ({ name }))
  return spec
}

/**
 * The affinity with a required "not on these nodes" added: nodeSelectorTerms are ORed, so
 * the exclusion joins every term (by metadata.name, which is exact where the hostname
 * label need not be). A field requirement on metadata.name may hold one value only (the
 * API server refuses the pod otherwise), so each node is its own NotIn; the requirements of
 * a term are ANDed, which makes them "none of these".
 */
export function withAvoidedNodes(affinity: Record<string, unknown> | undefined, nodes: string[]): Record<string, unknown> | undefined {
  if (!nodes.length) return affinity && Object.keys(affinity).length ? structuredClone(affinity) : undefined
  const out = structuredClone(affinity ?? {}) as { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Record<string, unknown>[] } } }
  const nodeAffinity = (out.nodeAffinity ??= {})
  const required = (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= {})
  const terms = required.nodeSelectorTerms?.length ? required.nodeSelectorTerms : [{}]
  const exclusions = [...new Set(nodes)].sort().map((node) => ({ key: 'metadata.name', operator: 'NotIn', values: [node] }))
  required.nodeSelectorTerms = terms.map((term) => ({ ...term, matchFields: [...((term.matchFields as unknown[]) ?? []), ...exclusions] }))
  return out
}

export interface TokenSecretInput {
  name: string
  namespace: string
  podName: string
  token: string
  labels?: Record<string, string>
  owner?: OwnerReference
}

/** the pod's token; immutable (the kubelet stops watching it, and nobody can swap it) */
export function tokenSecretManifest(input: TokenSecretInput) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: {
        ...input.labels,
        [POD_LABELS.name]: 'nightjar',
        [POD_LABELS.component]: TOKEN_COMPONENT,
        [POD_LABELS.managedBy]: MANAGED_BY,
        [POD_LABELS.pod]: input.podName,
      },
      ...(input.owner ? { ownerReferences: [{ ...input.owner }] } : {}),
    },
    type: 'Opaque',
    immutable: true,
    data: { [TOKEN_KEY]: Buffer.from(input.token, 'utf8').toString('base64') },
  }
}
