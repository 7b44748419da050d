// Extensions at the pod, with Debian's Chromium: the headless shell has no extension system
// (it takes --load-extension and ignores it, while the full binary runs the content script),
// so a pod on it refuses; a pod on the full binary writes each extension under a private
// folder, refuses a path leaving it, and removes the folder when it closes.
import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { startPod } from '../../browser-pod/pod.ts'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import { fails, inProcessSandbox, newToken } from './harness.ts'
import { waitFor } from '../helpers/wait.ts'

const FULL = '/usr/bin/chromium'
const SHELL = '/usr/lib/chromium/chromium-headless-shell'
const files = (content: string) => [
  { path: 'manifest.json', dataBase64: Buffer.from(JSON.stringify({ manifest_version: 3, name: 'Marker', version: '1', content_scripts: [{ matches: ['<all_urls>'], js: ['c.js'] }] })).toString('base64') },
  { path: 'c.js', dataBase64: Buffer.from(content).toString('base64') },
]

t.test('[ISSUE-51] the headless shell ignores --load-extension; the full Chromium runs the content script', async (t) => {
  const server = http.createServer((_, res) => res.end('<html><body><h1>page</h1></body></html>')).listen(0, '127.0.0.1')
  t.teardown(() => server.close())
  await new Promise((r) => server.once('listening', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-ext-test-'))
  t.teardown(() => import('node:fs/promises').then((fs) => fs.rm(dir, { recursive: true, force: true })))
  mkdirSync(join(dir, 'ext'))
  for (const f of files("document.body.dataset.extension = 'ran'")) writeFileSync(join(dir, 'ext', f.path), Buffer.from(f.dataBase64, 'base64'))
  const ran = async (executablePath: string, profile: string) => {
    const context = await chromium.launchPersistentContext(join(dir, profile), {
      executablePath, headless: true, chromiumSandbox: inProcessSandbox() === 'chromium',
      ignoreDefaultArgs: ['--disable-extensions'], args: [`--disable-extensions-except=${join(dir, 'ext')}`, `--load-extension=${join(dir, 'ext')}`],
    })
    try {
      const page = context.pages()[0] ?? (await context.newPage())
      await page.goto(url)
      // the full browser's content script runs at document_idle; the shell's page is just as idle
      return await page.waitForFunction(() => document.body.dataset.extension === 'ran', undefined, { timeout: 5000 }).then(() => true, () => false)
    } finally {
      await context.close()
    }
  }
  t.equal(await ran(FULL, 'full'), true, 'full Chromium: the content script ran')
  t.equal(await ran(SHELL, 'shell'), false, 'the headless shell: it never did')
})

t.test('[ISSUE-51] a pod on the headless shell refuses extensions; one on the full Chromium keeps them private and refuses a path out', async (t) => {
  await t.test('the shell: 503 extensions_unsupported, nothing written', async (t) => {
    const token = newToken()
    const pod = await startPod({ token, chromiumPath: SHELL, sandbox: inProcessSandbox() })
    t.teardown(() => pod.close())
    const client = new PodClient(pod.endpoint, token)
    t.teardown(() => client.close())
    await client.configure({ sessionId: 'nsess_shell', egress: { mode: 'platform', declaredHosts: [] } })
    const err = await fails(client.extensionPut({ id: 'next_shell', files: files('1') }))
    t.equal(err.status, 503)
    t.equal(err.reason, 'extensions_unsupported')
  })

  await t.test('the full browser: a private folder, gone with the pod', async (t) => {
    const token = newToken()
    const mine = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`nightjar-ext-${process.pid}-`))
    const before = new Set(mine())
    const pod = await startPod({ token, chromiumPath: FULL, sandbox: inProcessSandbox() })
    const client = new PodClient(pod.endpoint, token)
    t.teardown(() => client.close())
    await client.configure({ sessionId: 'nsess_full', egress: { mode: 'platform', declaredHosts: [] } })
    const escape = await fails(client.extensionPut({ id: 'next_full', files: [...files('1'), { path: '../escape.js', dataBase64: 'eA==' }] }))
    t.equal(escape.status, 400, 'a path leaving the folder is refused at the pod too')
    await client.extensionPut({ id: 'next_full', files: files('1') })
    const created = mine().filter((n) => !before.has(n))
    t.equal(created.length, 1, 'one folder for the session')
    const folder = join(tmpdir(), created[0])
    t.equal(statSync(folder).mode & 0o777, 0o700, 'readable by the pod’s user only')
    t.notOk(readdirSync(folder, { recursive: true }).some((n) => String(n).includes('escape')), 'nothing of the refused call was written')
    const loaded = await client.extensionsLoad()
    t.same(loaded, { ok: true, loaded: 1 })
    t.same(pod.session.tabs.map((x) => x.id), ['tab_1'], 'the session moved to the new browser’s one tab')
    t.not(pod.session.context!.browser(), pod.browser, 'a browser of its own, not the pooled one')
    t.equal(pod.session.extensionsLoaded, true)
    // that browser going away on its own is the pod's browser lost, as the pooled one's is
    let lost = false
    void pod.browserLost.then(() => (lost = true))
    await pod.session.context!.browser()!.close()
    await waitFor(() => lost, { what: 'browserLost' })
    t.pass('the pod says its browser is lost')
    await pod.close()
    t.notOk(mine().includes(created[0]), 'the folder went with the pod')
  })
})
