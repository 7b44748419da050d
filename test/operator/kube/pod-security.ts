// The Pod Security Standards "restricted" profile as a check over a pod spec (not a test
// file): https://kubernetes.io/docs/concepts/security/pod-security-standards/ — the rules
// a namespace labelled pod-security.kubernetes.io/enforce=restricted would apply.
type Obj = Record<string, any>

const ALLOWED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']

export function restrictedViolations(spec: Obj): string[] {
  const errs: string[] = []
  const podSc = spec.securityContext ?? {}
  for (const f of ['hostNetwork', 'hostPID', 'hostIPC']) if (spec[f]) errs.push(`${f} must not be set`)
  for (const v of spec.volumes ?? []) {
    const kind = Object.keys(v).find((k) => k !== 'name')
    if (!kind || !ALLOWED_VOLUMES.includes(kind)) errs.push(`volume ${v.name}: type ${kind} not allowed`)
  }
  if (podSc.runAsUser === 0) errs.push('pod runAsUser must not be 0')
  const podSeccomp = podSc.seccompProfile?.type
  if (podSeccomp && !['RuntimeDefault', 'Localhost'].includes(podSeccomp)) errs.push('pod seccompProfile must be RuntimeDefault or Localhost')
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    const sc = c.securityContext ?? {}
    const where = `container ${c.name}`
    if (sc.privileged) errs.push(`${where}: privileged`)
    if (sc.allowPrivilegeEscalation !== false) errs.push(`${where}: allowPrivilegeEscalation must be false`)
    if (!(sc.runAsNonRoot ?? podSc.runAsNonRoot)) errs.push(`${where}: runAsNonRoot must be true`)
    if (sc.runAsUser === 0) errs.push(`${where}: runAsUser must not be 0`)
    const seccomp = sc.seccompProfile?.type ?? podSeccomp
    if (!['RuntimeDefault', 'Localhost'].includes(seccomp)) errs.push(`${where}: seccompProfile must be RuntimeDefault or Localhost`)
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) errs.push(`${where}: capabilities must drop ALL`)
    for (const cap of sc.capabilities?.add ?? []) if (cap !== 'NET_BIND_SERVICE') errs.push(`${where}: capability ${cap} not allowed`)
    for (const p of c.ports ?? []) if (p.hostPort) errs.push(`${where}: hostPort not allowed`)
  }
  return errs
}
