// The cloak launch profile at the process level: the real pod entry with
// NIGHTJAR_BROWSER_KIND=cloak runs headful Chromium on a private Xvfb display with a
// per-session profile directory, behind the same egress gateway flags — and takes the
// display, the browser and the directory with it when it goes, even when killed.
import t from 'tap'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConnection } from 'node:net'
import { spawn } from 'node:child_process'
import { cmdline, descendants, environ, isAlive, ROOT, spawnPod } from '../harness.ts'
import { waitFor } from '../../helpers/wait.ts'

const CLOAK = { NIGHTJAR_BROWSER_KIND: 'cloak' }

function processesOf(pid: number) {
  const kids = descendants(pid)
  const browser = kids.find((p) => /chrom/.test(cmdline(p)) && !/--type=/.test(cmdline(p)))
  const xvfb = kids.find((p) => /^Xvfb /.test(cmdline(p)))
  return { kids, browser, xvfb }
}

function envOf(pid: number, name: string): string | undefined {
  return environ(pid).split('\0').find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1)
}

/** The X11 connection setup's first reply byte: 0 refused, 1 accepted. */
function x11Handshake(display: string, cookie?: Buffer): Promise<number> {
  const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)])
  const name = cookie ? Buffer.from('MIT-MAGIC-COOKIE-1') : Buffer.alloc(0)
  const data = cookie ?? Buffer.alloc(0)
  const head = Buffer.alloc(12)
  head.write('l', 0) // little-endian
  head.writeUInt16LE(11, 2)
  head.writeUInt16LE(0, 4)
  head.writeUInt16LE(name.length, 6)
  head.writeUInt16LE(data.length, 8)
  return new Promise((resolve, reject) => {
    const sock = createConnection(`/tmp/.X11-unix/X${display.slice(1)}`)
    sock.once('error', reject)
    sock.once('data', (d) => {
      resolve(d[0])
      sock.destroy()
    })
    sock.write(Buffer.concat([head, pad(name), pad(data)]))
  })
}

/** The cookie of the first entry of an Xauthority file. */
function xauthCookie(file: string): Buffer {
  const b = readFileSync(file)
  let o = 2 // family
  const field = () => {
    const len = b.readUInt16BE(o)
    const v = b.subarray(o + 2, o + 2 + len)
    o += 2 + len
    return v
  }
  field() // address
  field() // display number
  field() // auth name
  return field()
}

t.test('a cloak pod: headful Chromium on its own display, same egress flags', async (t) => {
  const pod = await spawnPod(t, CLOAK)
  const { browser, xvfb } = processesOf(pod.pid)
  t.ok(browser && xvfb, 'Chromium and Xvfb run as children of the pod')
  const args = cmdline(browser!)
  t.notMatch(args, /--headless/, 'not headless')
  t.notMatch(args, /--enable-automation/, 'no automation switch (navigator.webdriver stays false)')
  t.match(args, /--disable-blink-features=AutomationControlled/)
  t.match(args, /--user-data-dir=\S*nightjar-cloak-\d+-\w+\/profile/, 'a per-session profile directory')
  for (const flag of ['--proxy-server=http://127.0.0.1:', '--disable-quic', '--force-webrtc-ip-handling-policy=disable_non_proxied_udp', '--host-resolver-rules=MAP * ~NOTFOUND']) {
    t.ok(args.includes(flag), `egress flag kept: ${flag}`)
  }
  t.ok(!environ(browser!).includes(pod.token), 'the pod token never reaches Chromium')
  t.notOk(environ(browser!).split('\0').some((e) => e.startsWith('NIGHTJAR_')), 'nor any NIGHTJAR_ variable')

  t.test('the display admits only the pod: a client without its cookie is refused', async (t) => {
    const display = envOf(browser!, 'DISPLAY')!
    const authFile = envOf(browser!, 'XAUTHORITY')!
    t.match(display, /^:\d+$/)
    t.equal(await x11Handshake(display), 0, 'no cookie: refused')
    t.equal(await x11Handshake(display, Buffer.alloc(16, 7)), 0, 'a wrong cookie: refused')
    const cookie = xauthCookie(authFile)
    t.equal(await x11Handshake(display, cookie), 1, 'the pod cookie: accepted')
    cookie.fill(0)
  })

  t.test('SIGTERM: Chromium, Xvfb and the profile directory all go', async (t) => {
    const dir = /--user-data-dir=(\S+)\/profile/.exec(args)![1]
    t.ok(existsSync(dir))
    const { kids } = processesOf(pod.pid)
    pod.child.kill('SIGTERM')
    t.same(await pod.exited, { code: 0, signal: null })
    await waitFor(() => kids.every((p) => !isAlive(p)), { timeoutMs: 15_000, what: 'Chromium and Xvfb to exit' })
    t.notOk(existsSync(dir), 'the profile directory was removed')
  })
})

t.test('a SIGKILLed cloak pod leaves no process behind; its directory is swept by the next cloak launch', async (t) => {
  // a temp folder of its own: a cloak launch in a test file running beside this one sweeps
  // the shared temp folder too, and could take the killed pod's directory first
  const tmp = mkdtempSync(join(tmpdir(), 'nightjar-cloak-sweep-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))
  const own = { ...CLOAK, TMPDIR: tmp }
  const pod = await spawnPod(t, own)
  const { kids, browser, xvfb } = processesOf(pod.pid)
  t.ok(browser && xvfb)
  const dir = /--user-data-dir=(\S+)\/profile/.exec(cmdline(browser!))![1]
  pod.child.kill('SIGKILL')
  await pod.exited
  // Chromium's end of the DevTools pipe closes with the pod; Xvfb -terminate exits with its last client
  await waitFor(() => kids.every((p) => !isAlive(p)), { timeoutMs: 15_000, what: 'Chromium and Xvfb to exit' })
  t.pass('no Chromium and no Xvfb left')
  t.ok(dir.startsWith(tmp), 'the profile lives in the test’s own temp folder')
  t.ok(existsSync(dir), 'a killed pod could not remove its directory')
  await spawnPod(t, own)
  t.notOk(existsSync(dir), 'the next cloak launch swept it')
})

t.test('an unknown NIGHTJAR_BROWSER_KIND stops the pod before it starts anything', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'browser-pod/main.ts'], {
    cwd: ROOT, env: { ...process.env, NIGHTJAR_POD_TOKEN: 'x', NIGHTJAR_BROWSER_KIND: 'firefox' }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  t.equal(await new Promise((r) => child.once('exit', r)), 2)
  t.equal(out, '', 'no ready line')
  t.match(err, /NIGHTJAR_BROWSER_KIND must be chromium or cloak/)
})
