// The embedded PodRuntime with real child processes (the fake pod speaks the browser
// pod's contract; tests with the real browser pod are added by the lead).
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { EmbeddedPodRuntime, type EmbeddedPodRuntimeOptions } from '../../../operator/embedded/pod-runtime.ts'
import type { PodLaunchConfig } from '../../../ports/ports.ts'
import { waitFor } from '../../helpers/wait.ts'
import { alive, capturingLogger, fakePodCommand, POD_TIMEOUT } from '../helpers.ts'

const owner = { apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: 'x', uid: 'u' }
const launch = (sessionId: string, over: Partial<PodLaunchConfig> = {}): PodLaunchConfig => ({
  sessionId,
  browserKind: 'chromium',
  egress: { mode: 'split', declaredHosts: ['localhost:3000', '127.0.0.1'] },
  viewport: { width: 1024, height: 700 },
  labels: {},
  ...over,
})

function runtime(t: Test, opts: EmbeddedPodRuntimeOptions = {}) {
  const log = capturingLogger()
  const rt = new EmbeddedPodRuntime({ command: fakePodCommand(), log, killGraceMs: 2000, ...opts })
  t.teardown(() => rt.shutdown())
  return { rt, log }
}

const running = (rt: EmbeddedPodRuntime) => rt.processes().filter((p) => !p.sessionId && p.state === 'running')

async function fakeConfig(endpoint: string, token: string) {
  const res = await fetch(`${endpoint}/v1/fake/config`, { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, body: (await res.json()) as { configured: Record<string, unknown> | null; pid: number; envKeys: string[]; browserKind: string } }
}

t.test('a claim takes a warm pod, configures it over the pod API, and the pool refills', async (t) => {
  const { rt, log } = runtime(t, {
    poolSize: 2,
    env: { PATH: process.env.PATH, NIGHTJAR_HOST_ALIASES: '{"example.com":"198.18.0.10"}', DATABASE_URL: 'postgres://secret', NIGHTJAR_KMS_KEY: 'k' },
  })
  rt.start()
  await waitFor(() => running(rt).length === 2, { what: 'warm pool', timeoutMs: POD_TIMEOUT })
  const warmNames = running(rt).map((p) => p.podName)

  const notified: string[] = []
  rt.subscribe((s) => notified.push(s))
  const obs = await rt.ensure(launch('nsess_1', { storageState: { cookies: [{ name: 'sid' }], origins: [] } }), owner)
  t.equal(obs.phase, 'Ready', 'a warm claim is Ready when ensure returns')
  // the reconcile that claimed it reports Live from ensure's answer; a notification would
  // only queue a second reconcile on a cache without that status (a 409 per start)
  t.same(notified, [], 'and subscribers are not told again')
  t.ok(warmNames.includes(obs.podName!), 'the pod came from the pool')
  t.match(obs.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.same(await rt.ensure(launch('nsess_1'), owner), obs, 'ensure is idempotent')

  const access = (await rt.lookup('nsess_1'))!
  t.equal(access.endpoint, obs.endpoint)
  const { status, body } = await fakeConfig(access.endpoint, access.token)
  t.equal(status, 200)
  t.same(body.configured, {
    sessionId: 'nsess_1',
    egress: { mode: 'split', declaredHosts: ['localhost:3000', '127.0.0.1'] },
    viewport: { width: 1024, height: 700 },
    hasStorageState: true,
  })
  t.equal((await fakeConfig(access.endpoint, 'wrong-token')).status, 401, 'the pod API wants the pod token')
  t.ok(body.envKeys.includes('NIGHTJAR_HOST_ALIASES'), 'pass-through env reaches the pod')
  t.notOk(body.envKeys.includes('DATABASE_URL'), 'operator secrets do not')
  t.notOk(body.envKeys.includes('NIGHTJAR_KMS_KEY'))

  await waitFor(() => running(rt).length === 2, { what: 'pool refilled', timeoutMs: POD_TIMEOUT })
  t.equal(await rt.lookup('nsess_unknown'), undefined)
  const other = await rt.ensure(launch('nsess_2'), owner)
  const access2 = (await rt.lookup('nsess_2'))!
  t.not(other.podName, obs.podName)
  t.ok(access2.token !== access.token, 'a fresh token per pod')
  t.notOk(log.lines.some((l) => l.includes(access.token) || l.includes(access2.token)), 'tokens never logged')
})

t.test('a claim that leaves a warm pod lets the claimed session start before the refill; a claim that empties the pool refills once the claims in flight are configured', async (t) => {
  const { rt } = runtime(t, { poolSize: 2, poolRefillDelayMs: 60_000 })
  rt.start()
  await waitFor(() => running(rt).length === 2, { what: 'warm pool', timeoutMs: POD_TIMEOUT })
  const launching = () => rt.processes().filter((p) => p.state === 'starting').length
  await rt.ensure(launch('nsess_first'), owner)
  t.equal(running(rt).length, 1, 'one warm pod is left')
  t.equal(launching(), 0, 'no Chromium launch competes with the session just claimed')
  await rt.ensure(launch('nsess_second'), owner)
  t.equal(running(rt).length, 0, 'the pool is empty')
  t.ok(launching() > 0, 'so the refill starts as soon as it is configured: the next start would be cold otherwise')
  await waitFor(() => running(rt).length === 2, { what: 'pool refilled', timeoutMs: POD_TIMEOUT })
  await waitFor(() => launching() === 0, { what: 'refill done', timeoutMs: POD_TIMEOUT })

  // a burst: both warm pods claimed at once, the second claim empties the pool
  const a = rt.ensure(launch('nsess_burst_a'), owner)
  const b = rt.ensure(launch('nsess_burst_b'), owner)
  t.equal(running(rt).length, 0, 'both warm pods are claimed')
  t.equal(launching(), 0, 'no Chromium launch competes with the two configure calls in flight')
  await Promise.all([a, b])
  t.ok(launching() > 0, 'the refill starts once both are configured')
  t.equal((await rt.observe('nsess_burst_a')).phase, 'Ready')
  t.equal((await rt.observe('nsess_burst_b')).phase, 'Ready')
})

t.test('a cold start reports Pending, then notifies and turns Ready', async (t) => {
  const { rt } = runtime(t, { poolSize: 0 })
  rt.start()
  t.equal(rt.processes().length, 0, 'no pool')
  const notified: string[] = []
  rt.subscribe((s) => notified.push(s))
  const obs = await rt.ensure(launch('nsess_cold'), owner)
  t.equal(obs.phase, 'Pending')
  await waitFor(() => notified.includes('nsess_cold'), { what: 'notification', timeoutMs: POD_TIMEOUT })
  t.equal((await rt.observe('nsess_cold')).phase, 'Ready')
  t.same((await rt.list()).map((p) => p.sessionId), ['nsess_cold'])
})

t.test('cloak pods are started on demand, never taken from the chromium pool', async (t) => {
  const { rt } = runtime(t, { poolSize: 1 })
  rt.start()
  await waitFor(() => running(rt).length === 1, { what: 'pool', timeoutMs: POD_TIMEOUT })
  const pooled = running(rt)[0].podName
  const obs = await rt.ensure(launch('nsess_cloak', { browserKind: 'cloak' }), owner)
  t.not(obs.podName, pooled)
  await waitFor(async () => (await rt.observe('nsess_cloak')).phase === 'Ready', { timeoutMs: POD_TIMEOUT })
  const access = (await rt.lookup('nsess_cloak'))!
  t.equal((await fakeConfig(access.endpoint, access.token)).body.browserKind, 'cloak')
  t.equal(running(rt)[0]?.podName, pooled, 'the pool pod is untouched')
})

t.test('a killed session pod is Failed and subscribers hear of it; delete clears it', async (t) => {
  const { rt } = runtime(t, { poolSize: 1 })
  rt.start()
  await waitFor(() => running(rt).length === 1, { timeoutMs: POD_TIMEOUT })
  const notified: string[] = []
  rt.subscribe((s) => notified.push(s))
  await rt.ensure(launch('nsess_k'), owner)
  const pid = rt.processes().find((p) => p.sessionId === 'nsess_k')!.pid!
  process.kill(pid, 'SIGKILL')
  await waitFor(async () => (await rt.observe('nsess_k')).phase === 'Failed', { what: 'Failed' })
  const obs = await rt.observe('nsess_k')
  t.equal(obs.reason, 'PodExited')
  t.match(obs.message, /SIGKILL/)
  t.ok(notified.includes('nsess_k'))
  t.equal(await rt.lookup('nsess_k'), undefined, 'no pod access to a dead pod')
  await rt.delete('nsess_k')
  t.equal((await rt.observe('nsess_k')).phase, 'Gone')
  await rt.delete('nsess_k') // idempotent
})

t.test('a dead pool pod is replaced', async (t) => {
  const { rt } = runtime(t, { poolSize: 2 })
  rt.start()
  await waitFor(() => running(rt).length === 2, { timeoutMs: POD_TIMEOUT })
  const victim = running(rt)[0]
  process.kill(victim.pid!, 'SIGKILL')
  await waitFor(() => !rt.processes().some((p) => p.podName === victim.podName), { what: 'victim gone' })
  await waitFor(() => running(rt).length === 2, { what: 'replacement', timeoutMs: POD_TIMEOUT })
  t.notOk(running(rt).some((p) => p.podName === victim.podName))
})

t.test('a pod that refuses configuration fails the claim and is killed', async (t) => {
  const { rt } = runtime(t, { poolSize: 1, extraEnv: { FAKE_POD_CONFIGURE_STATUS: '500' } })
  rt.start()
  await waitFor(() => running(rt).length === 1, { timeoutMs: POD_TIMEOUT })
  const obs = await rt.ensure(launch('nsess_bad'), owner)
  t.equal(obs.phase, 'Failed')
  t.equal(obs.reason, 'ConfigureFailed')
  t.match(obs.message, /HTTP 500 E_FAKE/)
  await waitFor(() => !rt.processes().some((p) => p.sessionId === 'nsess_bad'), { what: 'pod killed' })
})

t.test('a pod that dies before its ready line fails with StartFailed', async (t) => {
  const { rt } = runtime(t, { poolSize: 0, extraEnv: { FAKE_POD_EXIT_BEFORE_READY: '1' } })
  await rt.ensure(launch('nsess_dead'), owner)
  await waitFor(async () => (await rt.observe('nsess_dead')).phase === 'Failed', { timeoutMs: POD_TIMEOUT })
  t.equal((await rt.observe('nsess_dead')).reason, 'StartFailed')
})

t.test('shutdown kills every child, escalating to SIGKILL, and leaves none running', async (t) => {
  const { rt } = runtime(t, { poolSize: 2, killGraceMs: 300, extraEnv: { FAKE_POD_STUBBORN: '1' } })
  rt.start()
  await waitFor(() => running(rt).length === 2, { timeoutMs: POD_TIMEOUT })
  await rt.ensure(launch('nsess_s'), owner)
  const pids = rt.processes().map((p) => p.pid!)
  t.ok(pids.length >= 2)
  const started = Date.now()
  await rt.shutdown()
  t.ok(Date.now() - started >= 250, 'stubborn pods needed the SIGKILL escalation')
  t.same(rt.processes(), [])
  t.same(pids.filter(alive), [], 'no child process left')
  await t.rejects(rt.ensure(launch('nsess_late'), owner), /shut down/)
})

t.test('pods do not outlive a parent that dies without cleaning up', async (t) => {
  const script = fileURLToPath(new URL('../orphan-parent.ts', import.meta.url))
  const parent = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'], cwd: fileURLToPath(new URL('../../../', import.meta.url)) })
  t.teardown(() => {
    if (parent.exitCode === null) parent.kill('SIGKILL')
  })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: parent.stdout! }).once('line', resolve)
    parent.once('exit', () => reject(new Error('parent exited early')))
  })
  const { pids } = JSON.parse(line) as { pids: number[] }
  t.equal(pids.length, 2)
  t.ok(pids.every(alive))
  parent.kill('SIGKILL') // no shutdown(), no exit handlers
  await waitFor(() => pids.every((p) => !alive(p)), { what: 'orphaned pods to exit', timeoutMs: 10_000 })
  t.pass('both pods exited on stdin EOF')
})

t.test('the warm pool grows toward a burst of claims, launching a bounded number at once, and shrinks back when the burst ages out', async (t) => {
  const { rt } = runtime(t, { poolSize: 1, poolMax: 4, poolWindowMs: 10_000, poolLaunchConcurrency: 2 })
  rt.start()
  await waitFor(() => running(rt).length === 1, { what: 'the minimum pool', timeoutMs: POD_TIMEOUT })
  let mostStarting = 0
  const watch = setInterval(() => {
    mostStarting = Math.max(mostStarting, rt.processes().filter((p) => p.state === 'starting').length)
  }, 5)
  t.teardown(() => clearInterval(watch))
  for (const id of ['nsess_b1', 'nsess_b2', 'nsess_b3']) await rt.ensure(launch(id), owner)
  t.equal(rt.poolTarget(), 3, 'three claims within ten seconds ask for three warm pods')
  await waitFor(() => running(rt).length === 3, { what: 'the pool grown to the burst', timeoutMs: POD_TIMEOUT })
  t.ok(mostStarting <= 2, `never more than two launches at once (saw ${mostStarting})`)
  await waitFor(() => running(rt).length === 1 && rt.poolTarget() === 1, { what: 'the pool back to its minimum once the burst aged out', timeoutMs: POD_TIMEOUT })
  t.pass('shrunk back to the minimum')
})

t.test('demand counts starts by when they were asked for: a burst that waited for launch slots is still one burst', async (t) => {
  const { rt } = runtime(t, { poolSize: 1, poolMax: 8, poolWindowMs: 120_000 })
  const now = Date.now()
  // served now, one after another as slots freed, but all asked for 30 s ago within two seconds
  for (const [i, id] of ['nsess_w1', 'nsess_w2', 'nsess_w3', 'nsess_w4'].entries()) await rt.ensure(launch(id, { requestedAt: now - 30_000 + i * 500 }), owner)
  t.equal(rt.poolTarget(), 4, 'four starts asked for at once ask for four warm pods')
  // two more, asked for 20 s apart: neither joins the burst's window
  await rt.ensure(launch('nsess_w5', { requestedAt: now - 5_000 }), owner)
  await rt.ensure(launch('nsess_w6', { requestedAt: now + 60_000 }), owner) // a clock ahead counts as now
  t.equal(rt.poolTarget(), 4, 'later, spread starts do not add to the burst')
  t.equal(rt.poolTarget(now + 91_000), 2, 'once the burst leaves the window, the latest two (5 s apart) are the demand')
})
