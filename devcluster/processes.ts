// The programs the development cluster runs, each a plain child process: started with its
// output in a log file, stopped with a grace period, waited for until a probe says it is up.
// Every starter in this folder uses these, and so does the test node (test/cluster/).
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** what a starter gets from the supervisor that composes it (supervisor.ts) */
export interface Supervision {
  /** starts one program: its log is <logs>/<name>.log, its pid remembered for the sweep */
  launch(bin: string, args: string[], name: string, env?: Record<string, string>): ChildProcess
  /** a teardown step, registered as soon as there is something to undo; they run last first */
  onStop(step: () => Promise<void>): void
  log(msg: string): void
  /** the directory of every program's log */
  logs: string
}

/** a program with stdout and stderr appended to logFile; env is added to this process's */
export function startLogged(bin: string, args: string[], logFile: string, env?: Record<string, string>): ChildProcess {
  const out = createWriteStream(logFile, { flags: 'a' })
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env && { ...process.env, ...env } })
  child.stdout!.pipe(out)
  child.stderr!.pipe(out)
  return child
}

/** SIGTERM, then SIGKILL after graceMs; resolves once the process has exited */
export async function stopProcess(child: ChildProcess | undefined, graceMs = 5000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

/**
 * Polls probe until it holds (a probe that throws counts as "not yet"), backing off to
 * 500 ms; fails early with died()'s reason when the program it waits for is gone.
 */
export async function waitFor(what: string, ms: number, probe: () => Promise<boolean>, died?: () => string | undefined): Promise<void> {
  const deadline = Date.now() + ms
  let delay = 50
  for (;;) {
    const why = died?.()
    if (why) throw new Error(`${what}: ${why}`)
    if (await probe().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${ms / 1000} s`)
    await new Promise((r) => setTimeout(r, delay))
    delay = Math.min(delay * 2, 500)
  }
}

/** for waitFor's died: why the child is gone, with the end of its log */
export const exitNote = (child: ChildProcess, name: string, logFile: string) => (): string | undefined =>
  child.exitCode !== null || child.signalCode !== null
    ? `${name} exited (${child.exitCode ?? child.signalCode}); last log lines:\n${tail(logFile)}`
    : undefined

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no log)'
  }
}

/** a TCP port free on host right now (the kernel's pick) */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, host, () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })
}
