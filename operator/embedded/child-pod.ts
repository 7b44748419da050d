// One browser pod as a child process: spawn, wait for the ready line, watch for exit, kill.
// A leaked Chromium outlives everything, so the pod exits on stdin EOF (the kernel closes
// the pipe if we die, even by SIGKILL), leads its own process group for a sweeping kill,
// and its pipes are always drained. Design: docs/operator.md#pods-in-the-embedded-runtime
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { Logger } from '../../ports/ports.ts'

export interface PodCommand {
  command: string
  args: string[]
  cwd?: string
}

export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
  /** the pod never printed its ready line */
  beforeReady: boolean
  /** spawn itself failed (e.g. ENOENT) */
  spawnError?: string
  /** the reason the pod gave on its way out ({"event":"failed",...}), e.g. SandboxUnavailable */
  reason?: { reason: string; message: string }
}

export interface ChildPodOptions {
  name: string
  command: PodCommand
  env: Record<string, string>
  /** only used to redact it from log lines */
  token: string
  /** run as this user (operator/embedded/pod-users.ts); undefined: as this process */
  user?: { uid: number; gid: number }
  readyTimeoutMs: number
  log: Logger
  onExit: (info: ExitInfo) => void
}

export class ChildPod {
  readonly name: string
  /** resolves with the pod API port once the pod printed {"event":"ready","port":N} */
  readonly ready: Promise<number>
  port?: number
  private readonly child: ChildProcess
  private readonly exitedPromise: Promise<void>
  private exitedFlag = false

  private readonly opts: ChildPodOptions
  constructor(opts: ChildPodOptions) {
    this.opts = opts
    this.name = opts.name
    let resolveReady!: (port: number) => void
    let rejectReady!: (err: Error) => void
    this.ready = new Promise<number>((res, rej) => {
      resolveReady = res
      rejectReady = rej
    })
    this.ready.catch(() => {}) // observed through onExit; never an unhandled rejection

    this.child = spawn(opts.command.command, opts.command.args, {
      cwd: opts.command.cwd,
      env: opts.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
    })
    this.child.stdin?.on('error', () => {}) // EPIPE when the pod is already gone

    const timeout = setTimeout(() => {
      rejectReady(new Error(`pod ${this.name} not ready after ${opts.readyTimeoutMs} ms`))
      void this.kill(2000)
    }, opts.readyTimeoutMs)
    timeout.unref()

    const redact = (line: string) => (opts.token ? line.split(opts.token).join('[redacted]') : line)
    let failure: ExitInfo['reason']
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      failure ??= parseFailedLine(line)
      if (this.port === undefined) {
        const port = parseReadyLine(line)
        if (port !== undefined) {
          this.port = port
          clearTimeout(timeout)
          resolveReady(port)
          return
        }
      }
      opts.log.debug({ pod: this.name, stream: 'stdout' }, redact(line).slice(0, 2000))
    })
    createInterface({ input: this.child.stderr! }).on('line', (line) => {
      opts.log.debug({ pod: this.name, stream: 'stderr' }, redact(line).slice(0, 2000))
    })

    this.exitedPromise = new Promise<void>((resolve) => {
      const finish = (info: ExitInfo) => {
        if (this.exitedFlag) return
        this.exitedFlag = true
        clearTimeout(timeout)
        this.signalGroup('SIGKILL') // sweep grandchildren left in the pod's group
        rejectReady(new Error(`pod ${this.name} exited before it was ready`))
        resolve()
        opts.onExit(info)
      }
      // the pod's last line may still be in the pipe when 'exit' fires: read to its end (or
      // half a second, should a straggler hold the pipe open) before reporting
      const stdoutClosed = new Promise<void>((r) => this.child.stdout!.once('close', r))
      this.child.once('exit', (code, signal) => {
        let cap: NodeJS.Timeout | undefined
        void Promise.race([stdoutClosed, new Promise<void>((r) => { cap = setTimeout(r, 500) })]).then(() => {
          clearTimeout(cap)
          finish({ code, signal, beforeReady: this.port === undefined, ...(failure ? { reason: failure } : {}) })
        })
      })
      this.child.once('error', (err) => {
        // 'error' without a pid means spawn failed and no 'exit' will follow
        if (this.child.pid === undefined) finish({ code: null, signal: null, beforeReady: true, spawnError: err.message })
      })
    })
  }

  get pid(): number | undefined {
    return this.child.pid
  }

  get exited(): boolean {
    return this.exitedFlag
  }

  /** EOF on stdin + SIGTERM; SIGKILL after graceMs. Resolves once the process has exited. */
  kill(graceMs: number): Promise<void> {
    if (this.exitedFlag) return this.exitedPromise
    this.child.stdin?.end()
    this.signalGroup('SIGTERM')
    const escalate = setTimeout(() => this.signalGroup('SIGKILL'), graceMs)
    return this.exitedPromise.finally(() => clearTimeout(escalate))
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid
    if (pid === undefined) return
    try {
      process.kill(-pid, signal)
    } catch {
      if (!this.exitedFlag) {
        try {
          this.child.kill(signal)
        } catch {
          /* already gone */
        }
      }
    }
  }
}

/** the browser pod's one stdout contract line: {"event":"ready","port":N} */
export function parseReadyLine(line: string): number | undefined {
  const s = line.trim()
  if (!s.startsWith('{')) return undefined
  try {
    const msg = JSON.parse(s) as { event?: unknown; port?: unknown }
    if (msg.event === 'ready' && Number.isInteger(msg.port) && (msg.port as number) > 0 && (msg.port as number) < 65536) return msg.port as number
  } catch {
    /* not JSON: an ordinary log line */
  }
  return undefined
}

/** the pod's last word when it cannot run: {"event":"failed","reason":"SandboxUnavailable","message":"…"} */
export function parseFailedLine(line: string): { reason: string; message: string } | undefined {
  const s = line.trim()
  if (!s.startsWith('{')) return undefined
  try {
    const msg = JSON.parse(s) as { event?: unknown; reason?: unknown; message?: unknown }
    if (msg.event === 'failed' && typeof msg.reason === 'string' && /^[A-Z][A-Za-z]{1,63}$/.test(msg.reason)) {
      return { reason: msg.reason, message: typeof msg.message === 'string' ? msg.message.slice(0, 1000) : msg.reason }
    }
  } catch {
    /* not JSON: an ordinary log line */
  }
  return undefined
}
