// What stands between a page and the pod: Chromium's own sandbox (seccomp-bpf, and user,
// PID and network namespaces for every renderer), gVisor's kernel when the pod runs under
// it, and this process kept out of Chromium's reach. docs/security.md is the threat model.
import { closeSync, readFileSync, writeSync } from 'node:fs'
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
const TOKEN_VAR = 'NIGHTJAR_POD_TOKEN'
const TOKEN_FD_VAR = 'NIGHTJAR_POD_TOKEN_FD'

/** the pod's variables under the names they had before NIGHTJAR_POD_* (read for one release) */
const OLD_POD_VARIABLES: Record<string, string> = {
  NIGHTJAR_NODE_TOKEN: TOKEN_VAR,
  NIGHTJAR_NODE_HOST: 'NIGHTJAR_POD_HOST',
  NIGHTJAR_NODE_PORT: 'NIGHTJAR_POD_PORT',
}

/**
 * Moves a variable set under its old name to its new one (a new name set too wins) and
 * removes the old, so no copy of the token is left behind; warns by name, never the value.
 */
export function adoptOldPodVariables(env: NodeJS.ProcessEnv, warn: (line: string) => void): void {
  for (const [old, renamed] of Object.entries(OLD_POD_VARIABLES)) {
    const value = env[old]
    if (value === undefined) continue
    delete env[old]
    env[renamed] ??= value
    warn(`${old} is deprecated and read for this release only: set ${renamed} instead`)
  }
}

/**
 * Takes the pod token out of the process's initial environment: gVisor's kernel lets any
 * process of the uid read /proc/<pid>/environ whatever the dumpable flag, and Node cannot
 * rewrite that block. The process hands the token to itself across execve on a pipe and
 * runs again with an environment without it. Returns false only when it cannot (then the
 * token is still in the environment); on success it does not return.
 */
export async function reexecWithoutToken(): Promise<boolean> {
  const token = process.env[TOKEN_VAR]
  if (!token) return true
  // Node ≥ 23.11; this project's @types/node predates it
  const execve = (process as unknown as { execve?: (file: string, args: string[], env: Record<string, string>) => never }).execve
  if (process.platform !== 'linux' || typeof execve !== 'function') return false
  try {
    const { default: koffi } = await import('koffi')
    const pipe = koffi.load('libc.so.6').func('int pipe(_Out_ int *fds)') as (fds: number[]) => number
    const fds = [-1, -1]
    if (pipe(fds) !== 0) return false
    // far below a pipe's buffer: the write never blocks, and the reader sees EOF after it
    writeSync(fds[1]!, token)
    closeSync(fds[1]!)
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (k !== TOKEN_VAR && v !== undefined) env[k] = v
    env[TOKEN_FD_VAR] = String(fds[0])
    execve.call(process, process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env)
  } catch {
    return false // the catch needs no more: the caller decides whether the pod may run so
  }
  return false
}

/** the pod token: from the pipe a re-exec handed over, else the environment; removed from both */
export function takePodToken(): string | undefined {
  const fd = process.env[TOKEN_FD_VAR]
  delete process.env[TOKEN_FD_VAR]
  if (fd !== undefined && /^\d+$/.test(fd)) {
    const token = readFileSync(Number(fd), 'utf8')
    closeSync(Number(fd))
    return token
  }
  const token = process.env[TOKEN_VAR]
  delete process.env[TOKEN_VAR]
  return token
}

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
