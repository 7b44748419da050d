// kube-scheduler 1.20.2 (scripts/fetch-kube.mjs --node): binds Pods to the one node.
import { join } from 'node:path'
import { stopProcess, type Supervision } from './processes.ts'

/** returns its stop, which the kubelet's drain calls first (a Pod made anew then stays unbound) */
export function startScheduler(sv: Supervision, opts: { binDir: string; kubeconfig: string }): () => Promise<void> {
  const sched = sv.launch(join(opts.binDir, 'kube-scheduler'), [`--kubeconfig=${opts.kubeconfig}`, '--leader-elect=false', '--port=0', '--secure-port=0', '--logtostderr=true', '--v=1'], 'kube-scheduler')
  const stop = () => stopProcess(sched, 10_000)
  sv.onStop(stop)
  return stop
}
