// The real pod entry (`node --import tsx browser-pod/main.ts`) as a child process, with
// real Chromium, driven through PodClient over real HTTP. The "public web" is a
// network namespace; loopback servers stand in for a developer's local services.
import t from 'tap'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import type { ApiError } from '../../contracts/errors.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { waitFor } from '../helpers/wait.ts'
import { cmdline, descendants, environ, fails, isAlive, loopbackServer, publicAliases, spawnPod } from './harness.ts'
import { shown } from '../helpers/perceived.ts'

const CANARY = 'Canary-Pw-0b5e2a'

/** If a test failed, do not leave the Chromium processes it started behind. */
function reap(pids: number[]): void {
  for (const p of pids) if (isAlive(p) && /chrom/.test(cmdline(p))) process.kill(p, 'SIGKILL')
}

t.test('browser pod process', async (t) => {
  const web = await startPublicWeb(t)
  const pod = await spawnPod(t, { NIGHTJAR_HOST_ALIASES: JSON.stringify(publicAliases(web.ip)), NIGHTJAR_DENY_CIDRS: '10.96.0.0/12' })
  const c = pod.client

  t.test('prints exactly one ready line and serves /healthz without auth', async (t) => {
    t.equal(pod.stdout().trim().split('\n').length, 1)
    t.same(JSON.parse(pod.stdout()), { event: 'ready', port: pod.port })
    const res = await fetch(`${pod.endpoint}/healthz`)
    t.equal(res.status, 200)
    t.same(await res.json(), { ok: true, configured: false, sandbox: 'chromium' }, 'Chromium\'s sandbox on, by default')
  })

  t.test('a wrong or missing pod token gets 401', async (t) => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${pod.token}`, `Bearer ${pod.token}x`, 'Bearer ']) {
      const res = await fetch(`${pod.endpoint}/v1/configure`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ sessionId: 'nsess_x', egress: { mode: 'platform', declaredHosts: [] } }),
      })
      t.equal(res.status, 401)
      t.same(await res.json(), { error: { code: 'unauthorized', message: 'unauthorized' } })
    }
    const e = await fails(new PodClient(pod.endpoint, 'not-the-token').drive('perceive', {}))
    t.equal(e.status, 401)
    t.same((await c.health()).configured, false, 'nothing was configured by the rejected calls')
  })

  t.test('routes before configure answer 409; bad bodies 400', async (t) => {
    const e = await fails(c.drive('navigate', { url: 'http://example.com/' }))
    t.equal(e.status, 409)
    t.equal(e.reason, 'not_configured')
    const bad = await fails(c.configure({ sessionId: 'nsess_x', egress: { mode: 'nowhere' as 'local', declaredHosts: [] } }))
    t.equal(bad.status, 400)
  })

  t.test('configure once', async (t) => {
    t.same(await c.configure({ sessionId: 'nsess_proc', egress: { mode: 'platform', declaredHosts: [] }, viewport: { width: 1024, height: 700 } }), {
      ok: true,
      sessionId: 'nsess_proc',
      sandbox: 'chromium',
    })
    t.same(await c.health(), { ok: true, configured: true, sandbox: 'chromium' })
    const again = await fails(c.configure({ sessionId: 'nsess_proc', egress: { mode: 'platform', declaredHosts: [] } }))
    t.equal(again.status, 409)
  })

  t.test('navigate, perceive, act, screenshot on public pages', async (t) => {
    const nav = await c.drive('navigate', { url: 'http://example.com/' })
    t.same(nav, { url: 'http://example.com/', title: 'Nightjar test home', status: 200 })
    const p = await c.drive('perceive', {})
    t.equal(p.url, 'http://example.com/')
    t.equal(p.title, 'Nightjar test home')
    t.match(p.snapshot, /- heading "Welcome to the test site" \[level=1\]/)
    t.match(p.snapshot, /- button "Press me"/)
    t.match(shown(p), /Welcome to the test site/)

    t.match(await c.drive('act', { verb: 'click', selector: '#go' }), { ok: true, verb: 'click', url: 'http://example.com/' })
    t.match(shown(await c.drive('perceive', {})), /clicked/)
    await c.drive('act', { verb: 'type', selector: '#q', text: 'nightjars' })
    await c.drive('act', { verb: 'press', selector: '#q', key: 'Enter' })
    t.match(shown(await c.drive('perceive', {})), /searched:nightjars/)
    t.match(await c.drive('select_option', { selector: '#colour', values: ['blue'] }), { ok: true, selected: ['blue'] })
    t.match(shown(await c.drive('perceive', {})), /colour:blue/)
    await c.drive('hover', { selector: '#hover-target' })
    t.match(shown(await c.drive('perceive', {})), /hovered/)
    t.match(await c.drive('wait_for', { text: 'Arrived late' }), { ok: true })
    t.match(await c.drive('wait_for', { selector: '#late' }), { ok: true })
    await c.drive('act', { verb: 'scroll', direction: 'down' })
    await c.drive('act', { verb: 'scroll', selector: '#bottom' })

    const shot = Buffer.from((await c.drive('screenshot', {})).png, 'base64')
    t.equal(shot.subarray(1, 4).toString(), 'PNG')
    t.equal(shot.readUInt32BE(16), 1024, 'viewport width from configure')
    const pdf = Buffer.from((await c.drive('pdf', {})).pdf, 'base64')
    t.equal(pdf.subarray(0, 4).toString(), '%PDF')
    const log = await c.drive('console_messages', {})
    t.ok(log.messages.some((m) => m.type === 'log' && m.text === 'home loaded' && m.time > 0))

    t.match(await c.drive('act', { verb: 'click', selector: '#next' }), { ok: true })
    await c.drive('wait_for', { text: 'Second page' })
    t.match(await c.drive('go_back', {}), { url: 'http://example.com/', title: 'Nightjar test home', status: 200 })
    t.match(await c.drive('reload', {}), { url: 'http://example.com/', status: 200 })
    t.match(await c.drive('act', { verb: 'goto', url: 'http://www.example.com/page2.html' }), { ok: true, verb: 'goto', title: 'Second page', status: 200 })
    const seen = await web.requests()
    t.ok(seen.some((r) => r.host === 'www.example.com' && r.url === '/page2.html'), 'traffic went to the namespace')
  })

  t.test('action errors are typed', async (t) => {
    await c.drive('navigate', { url: 'http://example.com/' })
    const missing = await fails(c.drive('wait_for', { selector: '#does-not-exist', timeoutMs: 300 }))
    t.equal(missing.status, 504)
    t.equal(missing.reason, 'timeout')
    const neither = await fails(c.drive('wait_for', { timeoutMs: 300 }))
    t.equal(neither.status, 400, "wait_for's refinement holds at the pod too")
    const noText = await fails(c.drive('act', { verb: 'type', selector: '#q' }))
    t.equal(noText.status, 400)
    const scheme = await fails(c.drive('navigate', { url: 'file:///etc/passwd' }))
    t.equal(scheme.status, 400, 'refused by the contract')
    const about = await fails(c.drive('navigate', { url: 'about:config' }))
    t.equal(about.status, 400)
    t.equal(about.reason, 'invalid_url', 'about: pages other than about:blank are refused by the pod')
    const origin404 = await c.drive('navigate', { url: 'http://example.com/missing.html' })
    t.equal(origin404.status, 404, 'an origin error status is a result, not an error')
  })

  t.test('perception never shows a password value', async (t) => {
    await c.drive('navigate', { url: 'http://example.com/login.html' })
    await c.drive('act', { verb: 'type', selector: '#pw', text: CANARY })
    await c.drive('act', { verb: 'type', selector: '#pw2', text: CANARY }) // inside a label: Playwright folds it into the checkbox name
    await c.drive('act', { verb: 'type', selector: '#user', text: 'visible-user' })
    const p = await c.drive('perceive', {})
    t.ok(!p.snapshot.includes(CANARY), 'not in the snapshot')
    t.ok(!p.text.includes(CANARY), 'not in the text')
    t.match(p.snapshot, /- textbox "Password" \[ref=\w+\]: ••••••••/)
    t.match(p.snapshot, /- textbox "Username" \[ref=\w+\]: "visible-user"/, 'other fields stay visible')
  })

  t.test('[EP-43] platform egress to a loopback server fails with net::ERR_CONNECTION_REFUSED', async (t) => {
    const local = await loopbackServer(t)
    for (const url of [`http://127.0.0.1:${local.port}/`, `https://127.0.0.1:${local.port}/`, `http://localhost:${local.port}/`]) {
      const e = await fails(c.drive('navigate', { url }))
      t.equal(e.status, 502, url)
      t.equal(e.code, 'E_UPSTREAM')
      t.equal(e.reason, 'NAVIGATION_FAILED')
      t.match(e.message, /net::ERR_CONNECTION_REFUSED/)
    }
    const viaRedirect = await fails(c.drive('navigate', { url: `http://example.com/redirect?to=http://127.0.0.1:${local.port}/` }))
    t.equal(viaRedirect.code, 'E_UPSTREAM', 'a redirect to loopback is refused too')
    t.match(viaRedirect.message, /net::ERR_CONNECTION_REFUSED/)
    const lan = await fails(c.drive('navigate', { url: 'http://192.168.254.254/' }))
    t.equal(lan.code, 'E_UPSTREAM', 'LAN addresses are local too')
    t.equal(local.connections(), 0, 'the loopback server never saw a connection')
  })

  t.test('deny floor: cloud metadata and configured cluster ranges', async (t) => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'https://169.254.169.254/', 'http://10.96.0.1/']) {
      const e = await fails(c.drive('navigate', { url }))
      t.equal(e.status, 403, url)
      t.equal(e.code, 'E_REACHABILITY_DENIED')
      t.equal(e.reason, 'deny_floor')
    }
  })

  t.test('auth-state capture includes cookies, localStorage and sessionStorage', async (t) => {
    await c.drive('navigate', { url: 'http://example.com/storage.html?write=1' })
    const s = await c.storageState()
    t.ok(s.cookies.some((k) => k.name === 'nj_cookie' && k.value === 'cookie-value'))
    t.ok(s.origins.some((o) => o.origin === 'http://example.com' && o.localStorage.some((e) => e.name === 'nj_local')))
    t.ok(s.sessionStorage.some((o) => o.origin === 'http://example.com' && o.entries.some((e) => e.name === 'nj_session')))
  })

  t.test('the token never reaches Chromium or the output', async (t) => {
    const kids = descendants(pod.pid)
    const browsers = kids.filter((p) => /chrom/.test(cmdline(p)))
    t.ok(browsers.length > 0, 'Chromium runs as a child of the pod')
    for (const p of browsers) t.ok(!environ(p).includes(pod.token), 'not in a Chromium environment')
    t.ok(!pod.stdout().includes(pod.token) && !pod.stderr().includes(pod.token), 'never printed')
  })

  t.test('stdin closing ends the pod and its Chromium (no orphans)', async (t) => {
    const kids = descendants(pod.pid)
    t.teardown(() => reap(kids))
    t.ok(kids.length > 0)
    pod.child.stdin!.end()
    const { code } = await pod.exited
    t.equal(code, 0)
    await waitFor(() => kids.every((p) => !isAlive(p)), { timeoutMs: 15_000, what: 'Chromium processes to exit' })
    t.pass('every Chromium process is gone')
  })
})

t.test('SIGTERM ends a pod cleanly; storageState is restored before the first navigation', async (t) => {
  const web = await startPublicWeb(t)
  const pod = await spawnPod(t, { NIGHTJAR_HOST_ALIASES: JSON.stringify(publicAliases(web.ip)) })
  await pod.client.configure({
    sessionId: 'nsess_warm',
    egress: { mode: 'platform', declaredHosts: [] },
    storageState: {
      cookies: [{ name: 'nj_cookie', value: 'restored-cookie', domain: 'example.com', path: '/', expires: -1, httpOnly: false, secure: false, sameSite: 'Lax' }],
      origins: [{ origin: 'http://example.com', localStorage: [{ name: 'nj_local', value: 'restored-local' }] }],
      sessionStorage: [{ origin: 'http://example.com', entries: [{ name: 'nj_session', value: 'restored-session' }] }],
    },
  })
  await pod.client.drive('navigate', { url: 'http://example.com/storage.html' })
  const p = await pod.client.drive('perceive', {})
  t.match(shown(p), /cookie=nj_cookie=restored-cookie/)
  t.match(shown(p), /local=restored-local/)
  t.match(shown(p), /session=restored-session/)

  const kids = descendants(pod.pid)
  t.teardown(() => reap(kids))
  pod.child.kill('SIGTERM')
  t.same(await pod.exited, { code: 0, signal: null })
  await waitFor(() => kids.every((k) => !isAlive(k)), { timeoutMs: 15_000, what: 'Chromium processes to exit' })
  t.pass('no orphans after SIGTERM')
})

t.test('a navigation right after recording_start answers is recorded', async (t) => {
  // recording_start answers once the recorder is in every open page: the caller drives at
  // once, and its first document must be in the timeline (it once raced the script's install)
  const pod = await spawnPod(t)
  await pod.client.configure({ sessionId: 'nsess_rec', egress: { mode: 'platform', declaredHosts: [] } })
  t.same(await pod.client.recordingStart(), { ok: true })
  await pod.client.drive('navigate', { url: 'data:text/html,' + encodeURIComponent('<title>First</title><h1>The first document</h1>') })
  const read = await pod.client.recordingRead({ after: 0, flush: true })
  const snapshots = read.chunks.flatMap((c) => c.events as Array<{ type: number }>).filter((e) => e.type === 2)
  t.ok(snapshots.some((e) => JSON.stringify(e).includes('The first document')), 'the first document’s snapshot is in the timeline')

  // a tab opened with a URL is recorded from its first document too
  await pod.client.drive('tab_open', { url: 'data:text/html,' + encodeURIComponent('<title>Tab</title><h1>The new tab document</h1>') })
  const inTab = await pod.client.recordingRead({ after: read.chunks.at(-1)?.seq ?? 0, flush: true })
  const tabSnapshots = inTab.chunks.flatMap((c) => c.events as Array<{ type: number }>).filter((e) => e.type === 2)
  t.ok(tabSnapshots.some((e) => JSON.stringify(e).includes('The new tab document')), 'the new tab’s first document is in the timeline')
})

t.test('even a SIGKILLed pod leaves no Chromium behind', async (t) => {
  const pod = await spawnPod(t)
  const kids = descendants(pod.pid)
  t.teardown(() => reap(kids))
  t.ok(kids.length > 0)
  pod.child.kill('SIGKILL')
  await pod.exited
  // Chromium's end of the DevTools pipe closes with the pod, and Chromium exits.
  await waitFor(() => kids.every((k) => !isAlive(k)), { timeoutMs: 15_000, what: 'Chromium processes to exit' })
  t.pass('no orphans after SIGKILL')
})

t.test('a pod without a token refuses to start', async (t) => {
  const { spawn } = await import('node:child_process')
  const env = { ...process.env }
  delete env.NIGHTJAR_POD_TOKEN
  delete env.NIGHTJAR_NODE_TOKEN // the name read for one release
  const child = spawn(process.execPath, ['--import', 'tsx', 'browser-pod/main.ts'], { cwd: new URL('../../', import.meta.url), env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const code = await new Promise((r) => child.once('exit', r))
  t.equal(code, 2)
  t.equal(out, '', 'no ready line')
})
