// Hostile pages, embedded: every browser pod runs Chromium with its own sandbox, proven from
// /proc of live sessions — renderers under seccomp-bpf in user and network namespaces of their
// own holding only lo, no process with --no-sandbox or as root, the pod process's memory out
// of Chromium's reach — plus the explicit opt-out and the refusal to fall back silently.
import t from 'tap'
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { waitFor } from '../helpers/wait.ts'
import { chromiumProcesses, namespacesOf, readAs, seccompFiltersOf, type ChromiumProcess } from '../helpers/sandbox-probe.ts'

const root = process.getuid?.() === 0

async function liveSession(s: TestServer, apiKey: string) {
  const r = await s.request('POST', '/v1/sessions', { token: apiKey, body: {} })
  if (r.status !== 201) throw new Error(`session start answered ${r.status}: ${r.text}`)
  // a page with a frame and a worker: more renderers and helpers to look at
  const nav = await s.request('POST', `/v1/sessions/${r.body.id}/navigate`, { token: apiKey, body: { url: 'data:text/html,<h1>hostile?</h1><iframe srcdoc="<p>frame</p>"></iframe>' } })
  if (nav.status !== 200) throw new Error(`navigate answered ${nav.status}`)
  const pod = s.plane!.pods.processes().find((p) => p.sessionId === r.body.id)!
  return { id: r.body.id as string, view: r.body, pod }
}

const renderersOf = async (podPid: number): Promise<ChromiumProcess[]> =>
  waitFor(() => {
    const procs = chromiumProcesses(podPid)
    return procs.some((p) => p.type === 'renderer') ? procs : null
  }, { what: 'the session’s renderer processes' })

t.test('Chromium’s sandbox in every embedded browser pod', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const a = await liveSession(s, acme.apiKey)

  t.test('[ISSUE-35] the session says which sandbox it runs in: REST, the resource status and the console', async (t) => {
    t.equal(a.view.sandbox, 'chromium', 'the start’s answer')
    const got = await s.request('GET', `/v1/sessions/${a.id}`, { token: acme.apiKey })
    t.equal(got.body.sandbox, 'chromium', 'GET /v1/sessions/:id')
    const resource = await s.plane!.sessions.get(a.id)
    t.equal(resource?.status?.sandbox, 'chromium', 'the BrowserSession status')
  })

  t.test('[ISSUE-35] every renderer has seccomp-bpf and user and network namespaces of its own holding only lo', async (t) => {
    const procs = await renderersOf(a.pod.pid!)
    const podNs = namespacesOf(a.pod.pid!)
    const renderers = procs.filter((p) => p.type === 'renderer')
    t.ok(renderers.length >= 1, `renderers found: ${renderers.length}`)
    for (const r of renderers) {
      t.equal(r.seccomp, 2, `renderer ${r.pid}: Seccomp 2 (a seccomp-bpf filter)`)
      t.ok(r.seccompFilters > seccompFiltersOf(a.pod.pid!), `renderer ${r.pid}: Chromium's own filter, which the pod process has not`)
      t.not(r.userNs, podNs.user, `renderer ${r.pid}: a user namespace of its own`)
      t.not(r.netNs, podNs.net, `renderer ${r.pid}: a network namespace of its own`)
      t.same(r.interfaces, ['lo'], `renderer ${r.pid}: its network namespace holds only lo`)
    }
  })

  t.test('[ISSUE-35] no Chromium process has --no-sandbox or runs as root', async (t) => {
    const procs = await renderersOf(a.pod.pid!)
    t.ok(procs.length >= 3, `Chromium processes: ${procs.length}`)
    t.same(procs.filter((p) => p.noSandboxFlag).map((p) => p.pid), [], 'none with --no-sandbox')
    t.same(procs.filter((p) => p.uids.includes(0)).map((p) => p.pid), [], 'none with uid 0 (real, effective, saved or filesystem)')
  })

  t.test('[ISSUE-35] the pod process’s memory and environment cannot be read from Chromium’s uid', async (t) => {
    const procs = await renderersOf(a.pod.pid!)
    const browser = procs.find((p) => p.type === 'browser')!
    const uid = browser.uids[1]
    const attempt = await readAs(uid, a.pod.pid!)
    t.equal(attempt.mem, 'EACCES', 'the pod process’s memory (the pod token, a fill’s plaintext) is refused')
    t.equal(attempt.environ, 'EACCES', 'so is its environment')
    // the same reader, at a process of the same uid that is not kept out of reach, reads it:
    // the refusal above is the pod's doing, not the reader's
    const control = await readAs(uid, browser.pid)
    t.equal(control.environ, 'read', 'Chromium’s own browser process is readable by its uid (the control)')
  })

  t.test('[ISSUE-35] the pod token is not in the pod process\'s environment block, which some kernels (gVisor) show to its uid', async (t) => {
    let environ: string
    try {
      environ = readFileSync(`/proc/${a.pod.pid!}/environ`, 'latin1')
    } catch (e) {
      // not root: the pod process shares this uid and refuses it (dumpable 0); nothing more to read
      t.equal((e as NodeJS.ErrnoException).code, 'EACCES', 'unreadable to its own uid')
      return
    }
    const names = environ.split('\0').map((kv) => kv.split('=')[0])
    t.ok(names.includes('NIGHTJAR_BROWSER_KIND'), 'the environment block was read (it holds the pod\'s other settings)')
    t.notOk(names.includes('NIGHTJAR_POD_TOKEN'), 'but no NIGHTJAR_POD_TOKEN: the pod ran itself again without it')
  })

  t.test('[ISSUE-35] as root, each pod runs as a uid of its own, with a home only it can enter', async (t) => {
    const b = await liveSession(s, acme.apiKey)
    if (!root) {
      // a service run as another user starts its pods as itself (Chromium's sandbox works unprivileged)
      t.equal(b.pod.uid, undefined, 'not root: the pod runs as the service')
      return
    }
    t.ok(a.pod.uid && a.pod.uid > 0, `pod ${a.pod.podName} runs as uid ${a.pod.uid}`)
    t.not(a.pod.uid, b.pod.uid, 'two pods never share a uid')
    const procs = await renderersOf(b.pod.pid!)
    t.ok(procs.every((p) => p.uids.every((u) => u === b.pod.uid)), 'its Chromium runs as that uid')
    const home = join(tmpdir(), 'nightjar-pods', b.pod.podName)
    const st = statSync(home)
    t.equal(st.uid, b.pod.uid, 'the home belongs to the pod’s uid')
    t.equal(st.mode & 0o777, 0o700, 'mode 0700')
    const other = await readAs(a.pod.uid!, b.pod.pid!)
    t.equal(other.environ, 'EACCES', 'one pod’s uid cannot read another pod’s process')
    await s.request('DELETE', `/v1/sessions/${b.id}`, { token: acme.apiKey })
    await waitFor(() => { try { statSync(home); return false } catch { return true } }, { what: 'the pod’s home removed with it' })
    t.pass('the home is removed when the pod ends')
  })
})

t.test('[ISSUE-35] NIGHTJAR_BROWSER_SANDBOX=none turns it off, and the session says so', async (t) => {
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_BROWSER_SANDBOX: 'none' } })
  const acme = await s.bootstrap()
  const a = await liveSession(s, acme.apiKey)
  t.equal(a.view.sandbox, 'none')
  const procs = await renderersOf(a.pod.pid!)
  t.ok(procs.find((p) => p.type === 'browser')?.noSandboxFlag, 'Chromium runs with --no-sandbox, as asked')
  t.ok(procs.filter((p) => p.type === 'renderer').every((p) => p.seccomp !== 2), 'its renderers have no seccomp filter')
})

t.test('[ISSUE-35] a sandbox that cannot start fails the session with SandboxUnavailable, never a silent --no-sandbox', async (t) => {
  // Chromium started in a user namespace where it is root: it refuses to run sandboxed
  // there, as it does on a host without user namespaces or as a root pod
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-nosandbox-'))
  chmodSync(dir, 0o755)
  const wrapper = join(dir, 'chromium-as-root')
  writeFileSync(wrapper, '#!/bin/sh\nexec unshare --user --map-root-user /usr/bin/chromium "$@"\n', { mode: 0o755 })
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_CHROMIUM_PATH: wrapper, NIGHTJAR_WARM_POOL_SIZE: '0' } })
  const acme = await s.bootstrap()
  const r = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: {}, headers: { prefer: 'wait=60' } })
  t.equal(r.status, 503, 'the start fails')
  const id = r.body.error?.sessionId ?? (await s.request('GET', '/v1/sessions?status=failed', { token: acme.apiKey })).body.items[0]?.id
  const got = await s.request('GET', `/v1/sessions/${id}`, { token: acme.apiKey })
  t.equal(got.body.status, 'failed')
  t.equal(got.body.failureReason, 'SandboxUnavailable', 'the reason names the sandbox')
  t.notOk(s.plane!.pods.processes().some((p) => p.sessionId === id), 'nothing runs for it')
  t.match(s.logs(), /user namespaces/, 'the log says what to change on the host')
})
