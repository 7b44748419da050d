// The browser pod's entry point: `node --import tsx browser-pod/main.ts`.
// Prints exactly one stdout line, {"event":"ready","port":N}, once the pod API listens.
// Exits (closing Chromium) on SIGTERM/SIGINT, when Chromium dies, and when stdin
// closes — the embedded runtime holds a pipe on stdin, so a dead parent never leaves
// an orphan Chromium. Under Kubernetes stdin is /dev/null and is not watched.
import { fstatSync } from 'node:fs'
import { isIP } from 'node:net'
import { BROWSER_KINDS, type BrowserKind } from '../crds/types.ts'
import { parseCidr } from './egress-policy.ts'
import { writeTerminationMessage } from './memory.ts'
import type { Pod } from './pod.ts'
import { startTracing } from '../telemetry/tracing.ts'
import { adoptOldPodVariables, keepOutOfReach, reexecWithoutToken, sandboxSetting, SandboxUnavailableError, takePodToken, type SandboxSetting } from './sandbox.ts'

const log = (line: string) => process.stderr.write(`browser-pod: ${line}\n`)

function fail(message: string): never {
  log(message)
  process.exit(2)
}

/**
 * The one way a pod that cannot keep its pages contained ends: a line the embedded
 * runtime reads, the termination message the kubelet reports, exit code 3.
 */
function failSandbox(message: string): never {
  log(`SandboxUnavailable: ${message}`)
  process.stdout.write(JSON.stringify({ event: 'failed', reason: 'SandboxUnavailable', message }) + '\n')
  writeTerminationMessage(`SandboxUnavailable: ${message}`)
  process.exit(3)
}

function config() {
  // The token stays in this process only: not in the environment Chromium inherits.
  const token = takePodToken()
  if (!token) fail('NIGHTJAR_POD_TOKEN is required')

  let hostAliases: Record<string, string> = {}
  if (process.env.NIGHTJAR_HOST_ALIASES) {
    try {
      hostAliases = JSON.parse(process.env.NIGHTJAR_HOST_ALIASES)
    } catch {
      fail('NIGHTJAR_HOST_ALIASES must be a JSON object of name -> IP')
    }
    if (typeof hostAliases !== 'object' || hostAliases === null || Array.isArray(hostAliases)) fail('NIGHTJAR_HOST_ALIASES must be a JSON object')
    for (const [k, v] of Object.entries(hostAliases)) if (typeof v !== 'string' || !isIP(v)) fail(`NIGHTJAR_HOST_ALIASES: ${k} must map to an IP address`)
  }
  const denyCidrs = (process.env.NIGHTJAR_DENY_CIDRS ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  for (const c of denyCidrs) {
    try {
      parseCidr(c)
    } catch {
      fail(`NIGHTJAR_DENY_CIDRS: invalid CIDR ${c}`)
    }
  }
  const browserKind = process.env.NIGHTJAR_BROWSER_KIND || 'chromium'
  if (!(BROWSER_KINDS as readonly string[]).includes(browserKind)) fail(`NIGHTJAR_BROWSER_KIND must be ${BROWSER_KINDS.join(' or ')}`)
  const port = Number(process.env.NIGHTJAR_POD_PORT ?? '0')
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('NIGHTJAR_POD_PORT must be a port number')
  return {
    token,
    browserKind: browserKind as BrowserKind,
    host: process.env.NIGHTJAR_POD_HOST || '127.0.0.1',
    port,
    chromiumPath: process.env.NIGHTJAR_CHROMIUM_PATH || undefined,
    hostAliases,
    denyCidrs,
    tunnelUrl: process.env.NIGHTJAR_TUNNEL_URL || undefined,
    sandbox: readSandboxSetting(),
    // set by the embedded runtime: this pod's loopback is every local user's
    sharedLoopback: process.env.NIGHTJAR_POD_SHARED_LOOPBACK === '1',
  }
}

function readSandboxSetting(): SandboxSetting {
  try {
    return sandboxSetting()
  } catch (e) {
    return failSandbox((e as Error).message)
  }
}

function stdinIsPipe(): boolean {
  try {
    const s = fstatSync(0)
    return s.isFIFO() || s.isSocket()
  } catch {
    return false
  }
}

async function main(): Promise<void> {
  // First: from here on no process of this uid — Chromium's included — can read this
  // one's memory or environment (the pod token, a fill's plaintext). With the sandbox on
  // that is part of the promise, so a pod that cannot do it does not start. The re-exec
  // (which resets the dumpable flag, so it comes first) leaves no token in /proc/1/environ.
  adoptOldPodVariables(process.env, log)
  const reexecuted = await reexecWithoutToken()
  const outOfReach = await keepOutOfReach()
  const cfg = config()
  if (process.platform === 'linux' && cfg.sandbox === 'chromium') {
    if (!reexecuted) failSandbox('could not take the pod token out of the process environment (execve through koffi\'s pipe)')
    if (!outOfReach) failSandbox('could not make the pod process non-dumpable (prctl through koffi)')
  }
  // spans of traced pod API calls, exported when an OTLP endpoint is configured (docs/observability.md)
  const tracing = await startTracing('nightjar-browser-pod').catch((e: Error) => fail(e.message))
  let starting: Promise<Pod | undefined> = Promise.resolve(undefined)
  let exiting = false
  const shutdown = async (code: number, why: string) => {
    if (exiting) return
    exiting = true
    if (code !== 0) log(why)
    // A stuck close must not keep Chromium's parent alive forever.
    setTimeout(() => process.exit(code), 10_000).unref()
    const pod = await starting.catch(() => undefined) // a pod still starting is closed too
    await pod?.close().catch(() => {})
    await tracing.shutdown().catch(() => {}) // the last spans go out; a collector that is down costs nothing more
    process.exit(code)
  }
  process.on('SIGTERM', () => void shutdown(0, 'SIGTERM'))
  process.on('SIGINT', () => void shutdown(0, 'SIGINT'))
  if (stdinIsPipe()) {
    process.stdin.on('data', () => {}) // drain; only the end matters
    process.stdin.on('end', () => void shutdown(0, 'stdin closed'))
    process.stdin.on('error', () => void shutdown(0, 'stdin closed'))
    process.stdin.resume()
  }

  // Loaded after the env is checked: a misconfigured pod fails fast, before Playwright loads.
  starting = Promise.all([import('./pod.ts'), import('./tunnel-dialer.ts')]).then(([{ startPod }, { RelayTunnelDialer }]) => {
    // local/split egress reaches the developer's machine through the api-server's relay
    let sessionId: () => string | undefined = () => undefined
    const tunnel = cfg.tunnelUrl ? new RelayTunnelDialer(cfg.tunnelUrl, cfg.token, () => sessionId()) : undefined
    return startPod({ ...cfg, tunnel, log }).then((pod) => {
      sessionId = () => pod.session.sessionId
      return pod
    })
  })
  let pod: Pod
  try {
    pod = (await starting)!
  } catch (e) {
    if (e instanceof SandboxUnavailableError) failSandbox(e.message)
    log(`start failed: ${(e as Error).message.split('\n')[0]}`)
    starting = Promise.resolve(undefined)
    return void shutdown(1, 'start failed')
  }
  if (exiting) return
  void pod.browserLost.then(() => shutdown(1, 'chromium exited'))
  void pod.outOfMemory.then(() => {
    const why = 'out of memory: a page outgrew the container\'s memory limit and its renderer was killed'
    writeTerminationMessage(why)
    // 137, as for a container the OOM killer stopped itself; the runtime reports OOMKilled
    void shutdown(137, why)
  })
  process.stdout.write(JSON.stringify({ event: 'ready', port: pod.port }) + '\n')
}

void main()
