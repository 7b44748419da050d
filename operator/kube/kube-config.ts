// Where the api-server is and who we are to it. In a pod: the service-account token and
// CA mounted by the kubelet (in-cluster config). Elsewhere: $KUBECONFIG or ~/.kube/config.
import { readFileSync } from 'node:fs'
import { KubeConfig } from '@kubernetes/client-node'

const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace'

export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromDefault()
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes API configured: not in a pod, and no $KUBECONFIG or ~/.kube/config')
  return kc
}

/** the namespace this pod runs in, when it runs in one */
export function podNamespace(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NIGHTJAR_POD_NAMESPACE) return env.NIGHTJAR_POD_NAMESPACE
  try {
    return readFileSync(SA_NAMESPACE_FILE, 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** a KubeConfig for a plain URL and optional bearer token (tests, port-forwards) */
export function kubeConfigFor(server: string, token?: string): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    // client-node refuses plain http unless TLS verification is "skipped" (there is no TLS
    // to verify); https keeps full verification
    clusters: [{ name: 'target', server, skipTLSVerify: server.startsWith('http:') }],
    users: [{ name: 'user', ...(token ? { token } : {}) }],
    contexts: [{ name: 'target', cluster: 'target', user: 'user', namespace: 'default' }],
    currentContext: 'target',
  })
  return kc
}
