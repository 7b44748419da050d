// What stands between a page and the pod: Chromium's own sandbox (seccomp-bpf, and user,
// PID and network namespaces for every renderer), gVisor's kernel when the pod runs under
// it, and this process kept out of Chromium's reach. docs/security.md is the threat model.
import { release, version } from 'node:os'
import type { SandboxKind } from '../crds/types.ts'

/** The operator's choice: Chromium's sandbox (the default) or none (NIGHTJAR_BROWSER_SANDBOX=none). */
export type SandboxSetting = 'chromium' | 'none'

export function sandboxSetting(env: NodeJS.ProcessEnv = process.env): SandboxSetting {
  const v = env.NIGHTJAR_BROWSER_SANDBOX
  if (v === undefined || v === '' || v === 'chromium') return 'chromium'
  if (v === 'none') return 'none'
  throw new SandboxUnavailableError(`NIGHTJAR_BROWSER_SANDBOX must be chromium or none, not ${JSON.stringify(v.slice(0, 40))}`)
}

/**
 * gVisor's kernel answers uname with a fixed release and build line of its own; a Linux
 * kernel never does. Read once: a process cannot change kernels.
 */
export function underGvisor(): boolean {
  return release() === '4.4.0' && version().includes('#1 SMP Sun Jan 10 15:06:54 PST 2016')
}

/** The layers a session runs in, as its status reports them. */
export function sandboxKind(setting: SandboxSetting, gvisor = underGvisor()): SandboxKind {
  if (setting === 'chromium') return gvisor ? 'chromium+gvisor' : 'chromium'
  return gvisor ? 'gvisor' : 'none'
}

/** Chromium could not start with its sandbox on: the pod fails with this reason, never silently without it. */
export class SandboxUnavailableError extends Error {
  readonly reason = 'SandboxUnavailable'
}

/** Chromium's own words when it refuses to run sandboxed (no user namespaces, seccomp refusing them, root). */
const REFUSALS = [/No usable sandbox/i, /Running as root without --no-sandbox is not supported/i, /Failed to move to new namespace/i]

export function isSandboxRefusal(message: string): boolean {
  return REFUSALS.some((r) => r.test(message))
}

/** What to change, said once for every refusal (docs/security.md has the details). */
export const SANDBOX_HELP =
  'Chromium could not start its sandbox: it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0), ' +
  'a non-root user, and on Kubernetes the nightjar-chromium seccomp profile (browserPods.seccompProfile); ' +
  'or turn it off explicitly with browserPods.sandbox=none / NIGHTJAR_BROWSER_SANDBOX=none (docs/security.md says what that costs)'

const PR_SET_DUMPABLE = 4

/**
 * Makes this process non-dumpable: its memory, environment and file descriptors can no
 * longer be read or traced by another process of the same uid (Chromium's own processes
 * included), only by root. Its children are dumpable again after exec, so Chromium is not
 * affected. Node has no prctl of its own: koffi (a maintained FFI with prebuilt binaries)
 * calls libc's. Returns false where that cannot be done (not Linux, no libc).
 */
export async function keepOutOfReach(): Promise<boolean> {
  if (process.platform !== 'linux') return false
  try {
    const { default: koffi } = await import('koffi')
    const libc = koffi.load('libc.so.6')
    const prctl = libc.func('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5)') as (...a: number[]) => number
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) === 0
  } catch {
    return false
  }
}
