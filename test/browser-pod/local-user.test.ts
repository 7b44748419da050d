// What another user of the machine reaches of embedded sessions: a process of another uid
// tries every loopback port there is — as Chrome's DevTools discovery (/json/version,
// /json/list), as an HTTP proxy (CONNECT and an absolute URL) — while a session holds a
// sealed fill. It must find no browser, get through no session's egress, and read no
// filled value. Controls show the probe finds both where they are open.
import t from 'tap'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chromium } from 'playwright-core'
import { startTestServer } from '../helpers/server.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { createPersona } from '../helpers/personas.ts'
import { chromiumProcesses } from '../helpers/sandbox-probe.ts'
import { waitFor } from '../helpers/wait.ts'

const root = process.getuid?.() === 0
const CANARY = `Lu-${randomBytes(8).toString('hex')}`

interface ProbeResult {
  ports: number[]
  /** ports that answered as Chrome's DevTools discovery */
  devtools: number[]
  /** ports that carried a request to the public web as a proxy */
  proxied: number[]
  /** everything any port answered, for the canary */
  answers: string
}

// Run as `node -e` by the uid under test: plain Node, no project code.
const PROBE = String.raw`
const net = require('node:net'); const fs = require('node:fs')
const target = process.argv[1]
const ports = new Set()
for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
  for (const line of fs.readFileSync(f, 'utf8').split('\n').slice(1)) {
    const c = line.trim().split(/\s+/)
    if (c[3] !== '0A') continue
    const [addr, port] = c[1].split(':')
    if (addr === '0100007F' || addr === '00000000' || /^0{24}01000000$/.test(addr) || /^0+$/.test(addr) || /^0{20}FFFF00000{7}0100007F$/i.test(addr)) ports.add(parseInt(port, 16))
  }
}
const ask = (port, text) => new Promise((resolve) => {
  const s = net.connect(port, '127.0.0.1'); let got = ''
  const done = () => { s.destroy(); resolve(got) }
  s.setTimeout(1500, done); s.on('error', done); s.on('close', done)
  s.on('data', (d) => { got += d.toString('latin1'); if (got.length > 65536) done() })
  s.on('connect', () => s.write(text))
})
;(async () => {
  const out = { ports: [...ports], devtools: [], proxied: [], answers: '' }
  for (const port of ports) {
    for (const path of ['/json/version', '/json/list']) {
      const a = await ask(port, 'GET ' + path + ' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
      out.answers += a
      if (/webSocketDebuggerUrl|"Browser":/.test(a)) out.devtools.push(port)
    }
    const c = await ask(port, 'CONNECT ' + target + ':80 HTTP/1.1\r\nHost: ' + target + ':80\r\n\r\n')
    const g = await ask(port, 'GET http://' + target + '/index.html HTTP/1.1\r\nHost: ' + target + '\r\nConnection: close\r\n\r\n')
    out.answers += c + g
    if (/^HTTP\/1\.[01] 200/.test(c) || /^HTTP\/1\.[01] 200[\s\S]*<html/i.test(g)) out.proxied.push(port)
  }
  process.stdout.write(JSON.stringify(out))
})()
`

function probeAs(uid: number | undefined, target: string): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', PROBE, target], { stdio: ['ignore', 'pipe', 'pipe'], ...(uid === undefined ? {} : { uid, gid: uid }) })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as ProbeResult) : reject(new Error(`probe exited ${code}: ${err.slice(0, 300)}`))))
  })
}

t.test('[ISSUE-46] another local user finds no session browser, no open egress and no filled value', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'login.example.com': web.ip, 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const persona = await createPersona(s, acme.apiKey, { name: 'local-user', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })
  const start = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: { identity: persona.identityId } })
  t.equal(start.status, 201, 'a persona session')
  const id = start.body.id as string
  const nav = await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: 'http://login.example.com/toolbox-echo.html' } })
  t.equal(nav.status, 200, 'on the login page')
  const fill = await s.request('POST', `/v1/sessions/${id}/fill-credential`, { token: acme.apiKey, body: { credentialName: 'login', selector: '#pw' } })
  t.equal(fill.status, 200, 'the sealed fill typed the secret into the page')
  const pod = s.plane!.pods.processes().find((p) => p.sessionId === id)!
  const other = root ? 65534 : undefined // nobody; not root, the probe can only be this uid

  t.test('the pod’s Chromium listens on no TCP port, and its GPU process is under seccomp-bpf', async (t) => {
    const procs = await waitFor(() => { const p = chromiumProcesses(pod.pid!); return p.some((x) => x.type === 'renderer') ? p : null }, { what: 'the session’s Chromium processes' })
    const gpu = procs.filter((p) => p.type === 'gpu-process')
    t.ok(gpu.length <= 1, 'at most one GPU process')
    for (const g of gpu) t.equal(g.seccomp, 2, `GPU process ${g.pid}: Seccomp 2`)
  })

  t.test('as another uid: no DevTools discovery answers, no session egress carries a request, the canary is nowhere', async (t) => {
    const seen = await probeAs(other, 'example.com')
    t.ok(seen.ports.length >= 3, `loopback ports tried: ${seen.ports.length} (the api-server, the pod API, the egress gateway at least)`)
    t.same(seen.devtools, [], 'no port answers as a browser’s DevTools')
    t.same(seen.proxied, [], 'no port carries a request to the web for it')
    t.notOk(seen.answers.includes(CANARY), 'the filled value is in no answer')
  })

  t.test('controls: the probe finds an open DevTools port, and the pod’s own uid gets through its gateway', async (t) => {
    const open = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--remote-debugging-port=0', '--headless'], chromiumSandbox: false })
    t.teardown(() => open.close())
    const control = await probeAs(other, 'example.com')
    t.ok(control.devtools.length >= 1, 'a browser started with a debugging port is found by the same probe')
    if (root) {
      const own = await probeAs(pod.uid, 'example.com')
      t.ok(own.proxied.length >= 1, 'the pod’s own uid (its Chromium’s) is served by its gateway: the refusal above is the uid check')
    }
  })
})
