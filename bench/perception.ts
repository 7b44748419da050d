// Perception benchmark (issue 27), beside its anchor in the same run: Nightjar's perceive
// against Playwright MCP's browser_snapshot (@playwright/mcp, a dev dependency used only
// here, run over stdio through the real MCP SDK client with the same Debian Chromium).
//
// The corpus is pages nobody here wrote, served on loopback: the Python and PostgreSQL
// reference documentation Debian ships as HTML (python3-doc, postgresql-doc-15; installed
// with apt-get when missing and allowed, otherwise each missing page is skipped with a
// message) and a single-page app an npm package ships (Playwright's trace viewer, from
// playwright-core), and two pages written here in the shapes the Debian corpus lacks
// (bench/pages/: a Node.js-manual-like page whose table of contents is links wrapping <code>,
// and a Redoc-like single-page API reference with a side menu of every operation). Nightjar reaches them the way an agent reaches a developer's localhost:
// a network declaring the server, the real daemon (in-process) and a session with local
// egress; the anchor's browser loads them directly.
//
// Per page: characters of the default perceive vs browser_snapshot (the text content an
// MCP client hands the model), p50 latency of each (alternating calls), refs given, and
// whether every link and button the anchor lists is reachable by ref through perceive's
// cursor walk. Then scripted tasks on small pages (find by words, act by ref, repeated
// names, a form in a frame, a single-page app): tool calls and characters returned per
// task on each side; both sides start on the loaded page (the navigation is not counted).
import http from 'node:http'
import { createReadStream, existsSync, statSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join, normalize, extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tmpdir } from 'node:os'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { startBench, percentile, progress, ms } from './harness.ts'
import { runDaemon } from '../cli/daemon.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const RUNS = 3
const PY = '/usr/share/doc/python3-doc/html'
const PG = '/usr/share/doc/postgresql-doc-15/html'
const TRACE = join(ROOT, 'node_modules/playwright-core/lib/vite/traceViewer')
const PAGES = join(ROOT, 'bench/pages')

/** the corpus: [name, served path, directory it lives in] */
const CORPUS: Array<[string, string, string]> = [
  ['Python: built-in functions', '/py/library/functions.html', PY],
  ['Python: built-in types', '/py/library/stdtypes.html', PY],
  ['Python: data model', '/py/reference/datamodel.html', PY],
  ['PostgreSQL: SELECT', '/pg/sql-select.html', PG],
  ['PostgreSQL: string functions', '/pg/functions-string.html', PG],
  ['Playwright trace viewer (SPA)', '/trace/index.html', TRACE],
  ['Node.js-like manual: fs (written here)', '/fixtures/node-fs.html', PAGES],
  ['Redoc-like API reference (SPA, written here)', '/fixtures/api-reference.html', PAGES],
]

const ROWS = ['Alpha', 'Bravo', 'Charlie'].map((n) => `<li>${n} <button onclick="this.parentNode.remove()">Delete</button></li>`).join('')
const TASK_PAGES: Record<string, string> = {
  '/tasks/rows.html': `<title>Rows</title><h1>Orders</h1><ul id=rows>${ROWS}</ul>`,
  '/tasks/frame.html': `<title>Frame</title><h1>Account</h1><p>Sign up below.</p><iframe src="/tasks/form.html" width=500 height=200></iframe>`,
  '/tasks/form.html': `<form onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'Hello ' + document.getElementById('n').value"><label>Your name <input id=n></label> <button>Send</button></form><p id=out></p>`,
  '/tasks/spa.html': `<title>App</title><nav><button onclick="show('home')">Home</button> <button onclick="show('settings')">Settings</button></nav><main id=view></main>
    <script>
      const views = { home: '<h1>Home</h1><p>Welcome back.</p>', settings: '<h1>Settings</h1><label><input type=checkbox id=dark> Dark mode</label>' }
      function show(v) { document.getElementById('view').innerHTML = views[v]; history.pushState({}, '', '#' + v) }
      show('home')
    </script>`,
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.woff2': 'font/woff2', '.ttf': 'font/ttf' }

function serveCorpus(): Promise<http.Server> {
  const mounts: Record<string, string> = { py: PY, pg: PG, trace: TRACE, fixtures: PAGES }
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    if (TASK_PAGES[path]) return void res.writeHead(200, { 'content-type': TYPES['.html'] }).end(TASK_PAGES[path])
    const [, mount, ...rest] = path.split('/')
    const dir = mounts[mount ?? '']
    const file = dir && normalize(join(dir, rest.join('/')))
    if (!file || !file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end('not found')
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
    createReadStream(file).pipe(res)
  })
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)))
}

/** Debian's documentation packages, installed as scripts/setup.mjs installs packages (root with apt-get only). */
function ensureDocs(): void {
  const missing = [[PY, 'python3-doc'], [PG, 'postgresql-doc-15']].filter(([d]) => !existsSync(d)).map(([, p]) => p!)
  if (!missing.length) return
  if (process.getuid?.() !== 0) return progress(`missing ${missing.join(', ')}: their pages are skipped (install with: sudo apt-get install -y ${missing.join(' ')})`)
  progress(`installing ${missing.join(', ')} with apt-get…`)
  try {
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  } catch {
    progress(`apt-get could not install ${missing.join(', ')}: their pages are skipped`)
  }
}

/** what a model reads of a tool result: its text content */
type Result = { text: string; isError: boolean }
type Side = (tool: string, args: Record<string, unknown>) => Promise<Result>

function caller(client: Client): Side {
  return async (name, args) => {
    const r = await client.callTool({ name, arguments: args })
    const text = ((r.content as Array<{ type: string; text?: string }>) ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n')
    return { text, isError: !!r.isError }
  }
}

/** a line `name: value` of a Nightjar page-changing tool's answer (its fields, or the changes' `url:` line) */
const field = (r: Result, name: string): string => new RegExp(`^${name}: (.*)$`, 'm').exec(r.text)?.[1] ?? ''
/** the changes of such an answer: after the fields' blank line, or the whole text when it has no fields */
const changesIn = (r: Result): string => (r.text.includes('\n\n') ? r.text.slice(r.text.indexOf('\n\n') + 2) : r.text)

const refIn = (text: string, line: RegExp): string | undefined =>
  /\[ref=((?:f\d+)?e\d+)\]/.exec(text.split('\n').find((l) => line.test(l)) ?? '')?.[1]

/** (role, name) of every link and button a snapshot lists */
function controls(text: string): string[] {
  return [...text.matchAll(/- (link|button) "((?:[^"\\]|\\.)*)"/g)].map((m) => `${m[1]} ${m[2]}`)
}

export async function benchPerception(): Promise<{ pages: Array<Record<string, string | number>>; tasks: Array<Record<string, string | number>>; summary: Array<Record<string, string | number>> }> {
  ensureDocs()
  const web = await serveCorpus()
  const port = (web.address() as AddressInfo).port
  const b = await startBench({ warmPool: 1 })
  const ac = new AbortController()
  const anchorClient = new Client({ name: 'nightjar-bench', version: '1.0.0' })
  const ours = new Client({ name: 'nightjar-bench', version: '1.0.0' })
  try {
    // the server on the developer's loopback, reached through a network and its daemon (local egress)
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(b.url + path, { method, headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
      return res.status === 204 ? {} : res.json()
    }
    const created = await api('POST', '/v1/networks', { name: 'bench' })
    await api('PATCH', `/v1/networks/${created.network.id}`, { declaredHosts: [`localhost:${port}`] })
    // the daemon ends when the bench aborts it (ac.abort at the end); that rejection is its normal exit
    void runDaemon({ network: 'bench', token: created.token.secret, tunnelUrl: b.url.replace(/^http/, 'ws'), host: 'bench', log: () => {} }, { signal: ac.signal }).catch(() => {})
    for (let i = 0; !(await api('GET', `/v1/networks/${created.network.id}/daemons`)).some((d: any) => d.reachable); i++) {
      if (i > 300) throw new Error('the daemon did not attach')
      await new Promise((r) => setTimeout(r, 100))
    }
    const session = await api('POST', '/v1/sessions', { egress: 'local', network: 'bench' })
    await ours.connect(new StreamableHTTPClientTransport(new URL(b.url + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${b.apiKey}` } } }))
    await anchorClient.connect(new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, 'node_modules/@playwright/mcp/cli.js'), '--executable-path', '/usr/bin/chromium', '--headless', '--no-sandbox', '--isolated', '--viewport-size', '1280x720', '--output-dir', tmpdir()],
      stderr: 'ignore',
    }))
    const nj: Side = caller(ours)
    const pw: Side = caller(anchorClient)
    const sid = session.id as string
    const base = `http://localhost:${port}`
    const goBoth = async (path: string) => {
      const a = await nj('navigate', { sessionId: sid, url: base + path, changes: false })
      const c = await pw('browser_navigate', { url: base + path })
      if (a.isError || c.isError) throw new Error(`navigate ${path}: ${a.isError ? a.text : c.text}`)
    }

    // --- the corpus -------------------------------------------------------------------
    const pages: Array<Record<string, string | number>> = []
    const ratios: number[] = []
    const ourTimes: number[] = []
    const anchorTimes: number[] = []
    let over = 0
    let unreachable = 0
    for (const [name, path, dir] of CORPUS) {
      if (!existsSync(join(dir, path.split('/').slice(2).join('/')))) {
        progress(`${name}: ${path} is not installed here, skipped`)
        continue
      }
      progress(`${name}: ${RUNS} perceive and ${RUNS} browser_snapshot, alternating`)
      await goBoth(path)
      const mine: number[] = []
      const theirs: number[] = []
      let first: Result | undefined
      let snap: Result | undefined
      for (let i = 0; i < RUNS + 1; i++) {
        const order = i % 2 ? ['pw', 'nj'] : ['nj', 'pw']
        for (const side of order) {
          const t0 = performance.now()
          const r = side === 'nj' ? await nj('perceive', { sessionId: sid }) : await pw('browser_snapshot', {})
          const dt = performance.now() - t0
          if (r.isError) throw new Error(`${side} on ${path}: ${r.text.slice(0, 300)}`)
          if (i === 0) continue // warm-up
          if (side === 'nj') (first = r), mine.push(dt)
          else (snap = r), theirs.push(dt)
        }
      }
      // every link and button the anchor lists, reached by ref through the cursor walk
      const walked: string[] = [first!.text]
      let cursor = /perceive with cursor "([^"]+)"/.exec(first!.text)?.[1]
      for (let i = 0; cursor && i < 500; i++) {
        const next = await nj('perceive', { sessionId: sid, cursor })
        walked.push(next.text)
        cursor = /perceive with cursor "([^"]+)"/.exec(next.text)?.[1]
      }
      const withRefs = walked.join('\n').split('\n').filter((l) => /\[ref=/.test(l)).join('\n')
      const have = new Map<string, number>()
      for (const c of controls(withRefs)) have.set(c, (have.get(c) ?? 0) + 1)
      const wanted = controls(snap!.text)
      let reached = 0
      for (const c of wanted) {
        const n = have.get(c) ?? 0
        if (n > 0) (reached++, have.set(c, n - 1))
      }
      unreachable += wanted.length - reached
      const ratio = first!.text.length / snap!.text.length
      ratios.push(ratio)
      if (first!.text.length > 12_000) over++
      const p50 = percentile(mine, 50)
      const a50 = percentile(theirs, 50)
      ourTimes.push(p50)
      anchorTimes.push(a50)
      pages.push({
        page: name,
        'perceive chars': first!.text.length,
        'browser_snapshot chars': snap!.text.length,
        ratio: ratio.toFixed(2),
        'perceive p50': ms(p50),
        'snapshot p50': ms(a50),
        'latency ratio': (p50 / a50).toFixed(2),
        'refs (first answer / anchor)': `${(first!.text.match(/\[ref=/g) ?? []).length} / ${(snap!.text.match(/\[ref=/g) ?? []).length}`,
        'anchor links+buttons reachable by ref': `${reached}/${wanted.length}`,
        'cursor calls': walked.length - 1,
      })
    }

    // --- tasks ------------------------------------------------------------------------
    /** each side's counted work, then an uncounted read of the page that `done` judges (the same test on both sides) */
    type Task = { name: string; path: string; nj: () => Promise<unknown>; pw: () => Promise<unknown>; done: (page: string) => boolean }
    let calls = 0
    let chars = 0
    const count = (side: Side): Side => async (tool, args) => {
      const r = await side(tool, args)
      calls++
      chars += r.text.length
      return r
    }
    const N = count(nj)
    const P = count(pw)
    const tasks: Task[] = [
      {
        name: 'find by words: open "zip" in the Python built-ins',
        path: '/py/library/functions.html',
        done: (page) => /^(?:url:|- Page URL:) \S*functions\.html#zip$/m.test(page),
        nj: async () => {
          const q = await N('perceive', { sessionId: sid, query: 'zip' })
          // the AI snapshot leaves out a link's name when its child says it (`- link [url=#zip]` › `- code: zip()`)
          const ref = refIn(q.text, /- link\b.*\[url=#zip\]/)
          const r = await N('act', { sessionId: sid, verb: 'click', ref })
          return field(r, 'url').endsWith('#zip')
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          const lines = s.text.split('\n')
          const ref = refIn(lines[lines.findIndex((l) => /- \/url: "?#zip"?$/.test(l)) - 1] ?? '', /- link/)
          const r = await P('browser_click', { element: 'zip() link', target: ref })
          return /#zip/.test(r.text)
        },
      },
      {
        name: 'act by ref: SELECT page, open "LIMIT Clause"',
        path: '/pg/sql-select.html',
        done: (page) => /^(?:url:|- Page URL:) \S*sql-select\.html#SQL-LIMIT$/im.test(page),
        nj: async () => {
          const q = await N('perceive', { sessionId: sid, query: 'limit clause' })
          const ref = refIn(q.text, /- link "LIMIT Clause"/)
          const r = await N('act', { sessionId: sid, verb: 'click', ref })
          return /#SQL-LIMIT/i.test(field(r, 'url'))
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          const ref = refIn(s.text, /- link "LIMIT Clause"/)
          const r = await P('browser_click', { element: 'LIMIT Clause link', target: ref })
          return /#SQL-LIMIT/i.test(r.text)
        },
      },
      {
        name: 'find the link by words and follow it: "fsPromises.readFile" in a Node-like manual',
        path: '/fixtures/node-fs.html',
        done: (page) => /^(?:url:|- Page URL:) \S*node-fs\.html#fspromisesreadfilepath-options$/m.test(page),
        nj: async () => {
          // the match is the `code` inside the table of contents' link: the answer puts the link around it
          const q = await N('perceive', { sessionId: sid, query: 'fsPromises.readFile' })
          const ref = refIn(q.text, /- link\b.*\[url=#fspromisesreadfilepath-options\]/)
          const r = await N('act', { sessionId: sid, verb: 'click', ref })
          return field(r, 'url').endsWith('#fspromisesreadfilepath-options')
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          const lines = s.text.split('\n')
          const ref = refIn(lines[lines.findIndex((l) => /- \/url: "?#fspromisesreadfilepath-options"?$/.test(l)) - 1] ?? '', /- link/)
          const r = await P('browser_click', { element: 'fsPromises.readFile link', target: ref })
          return /#fspromisesreadfilepath-options/.test(r.text)
        },
      },
      {
        name: 'a single-page app’s side menu: open "End a session"',
        path: '/fixtures/api-reference.html',
        done: (page) => /^(?:url:|- Page URL:) \S*api-reference\.html#operation\/sessions_end_a_session$/m.test(page),
        nj: async () => {
          const q = await N('perceive', { sessionId: sid, query: 'end a session' })
          const ref = refIn(q.text, /- menuitem "delete End a session"/)
          const r = await N('act', { sessionId: sid, verb: 'click', ref })
          return field(r, 'url').endsWith('#operation/sessions_end_a_session')
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          const ref = refIn(s.text, /- menuitem "delete End a session"/)
          const r = await P('browser_click', { element: 'End a session menu item', target: ref })
          return /#operation\/sessions_end_a_session/.test(r.text)
        },
      },
      {
        name: 'repeated names: delete the second of three rows',
        path: '/tasks/rows.html',
        done: (page) => page.includes('Alpha') && page.includes('Charlie') && !page.includes('Bravo'),
        nj: async () => {
          const q = await N('perceive', { sessionId: sid, query: 'bravo' })
          const ref = refIn(q.text, /- button "Delete"/)
          const r = await N('act', { sessionId: sid, verb: 'click', ref })
          return /^- listitem/m.test(changesIn(r)) && !changesIn(r).includes('+')
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          const refs = [...s.text.matchAll(/button "Delete" \[ref=(\w+)\]/g)].map((m) => m[1])
          const r = await P('browser_click', { element: 'second Delete button', target: refs[1] })
          return r.text.includes('Alpha') && r.text.includes('Charlie') && !r.text.includes('Bravo')
        },
      },
      {
        name: 'a form in a frame: type a name, send',
        path: '/tasks/frame.html',
        done: (page) => page.includes('Hello Ada'),
        nj: async () => {
          const p = await N('perceive', { sessionId: sid })
          await N('act', { sessionId: sid, verb: 'type', ref: refIn(p.text, /textbox "Your name"/), text: 'Ada', changes: false })
          const r = await N('act', { sessionId: sid, verb: 'click', ref: refIn(p.text, /button "Send"/) })
          return changesIn(r).includes('Hello Ada')
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          await P('browser_type', { element: 'name field', target: refIn(s.text, /textbox "Your name"/), text: 'Ada' })
          const r = await P('browser_click', { element: 'Send', target: refIn(s.text, /button "Send"/) })
          return r.text.includes('Hello Ada')
        },
      },
      {
        name: 'a single-page app: open Settings, turn on dark mode',
        path: '/tasks/spa.html',
        done: (page) => /checkbox "Dark mode" \[checked\]/.test(page),
        nj: async () => {
          const p = await N('perceive', { sessionId: sid })
          const opened = await N('act', { sessionId: sid, verb: 'click', ref: refIn(p.text, /button "Settings"/) })
          const r = await N('act', { sessionId: sid, verb: 'click', ref: refIn(changesIn(opened), /checkbox "Dark mode"/) })
          return /checkbox "Dark mode" \[checked\]/.test(changesIn(r))
        },
        pw: async () => {
          const s = await P('browser_snapshot', {})
          const opened = await P('browser_click', { element: 'Settings', target: refIn(s.text, /button "Settings"/) })
          const r = await P('browser_click', { element: 'Dark mode', target: refIn(opened.text, /checkbox "Dark mode"/) })
          return /checkbox "Dark mode" \[checked\]/.test(r.text)
        },
      },
    ]
    const taskRows: Array<Record<string, string | number>> = []
    let ok = 0
    let total = 0
    let fewerCalls = true
    const charRatios: number[] = []
    for (const task of tasks) {
      const dir = task.path.startsWith('/py/') ? PY : task.path.startsWith('/pg/') ? PG : ''
      if (dir && !existsSync(join(dir, task.path.split('/').slice(2).join('/')))) {
        progress(`${task.name}: ${task.path} is not installed here, skipped`)
        continue
      }
      progress(`task: ${task.name}`)
      await goBoth(task.path)
      calls = chars = 0
      await task.nj().catch((e) => progress(`  Nightjar: ${(e as Error).message.slice(0, 200)}`))
      const njCalls = calls
      const njChars = chars
      const njOk = task.done((await nj('perceive', { sessionId: sid, maxChars: 500_000 })).text)
      calls = chars = 0
      await task.pw().catch((e) => progress(`  Playwright MCP: ${(e as Error).message.slice(0, 200)}`))
      const pwOk = task.done((await pw('browser_snapshot', {})).text)
      total++
      if (njOk) ok++
      if (njCalls > calls) fewerCalls = false
      charRatios.push(njChars / chars)
      taskRows.push({
        task: task.name,
        'Nightjar: done / calls / chars': `${njOk ? 'yes' : 'NO'} / ${njCalls} / ${njChars}`,
        'Playwright MCP: done / calls / chars': `${pwOk ? 'yes' : 'NO'} / ${calls} / ${chars}`,
        'chars ratio': (njChars / chars).toFixed(2),
      })
    }
    const median = (v: number[]) => percentile(v, 50)
    const summary = [
      { target: 'default perceive ≤ 12,000 chars on every page', measured: `${pages.length - over}/${pages.length} pages`, met: over === 0 ? 'yes' : 'no' },
      { target: 'perceive ≤ 0.25× browser_snapshot at the corpus median', measured: `${median(ratios).toFixed(2)}×`, met: median(ratios) <= 0.25 ? 'yes' : 'no' },
      { target: 'every anchor link/button reachable by ref through cursors', measured: `${unreachable} unreachable`, met: unreachable === 0 ? 'yes' : 'no' },
      { target: 'perceive p50 ≤ 1.2× browser_snapshot p50 (median over pages)', measured: `${median(ourTimes.map((v, i) => v / anchorTimes[i]!)).toFixed(2)}×`, met: median(ourTimes.map((v, i) => v / anchorTimes[i]!)) <= 1.2 ? 'yes' : 'no' },
      { target: 'tasks: 100% success', measured: `${ok}/${total}`, met: ok === total ? 'yes' : 'no' },
      { target: 'tool calls per task ≤ the anchor’s', measured: fewerCalls ? 'every task' : 'not every task', met: fewerCalls ? 'yes' : 'no' },
      { target: 'chars per task ≤ 0.3× the anchor’s (worst task)', measured: `${Math.max(...charRatios).toFixed(2)}×`, met: Math.max(...charRatios) <= 0.3 ? 'yes' : 'no' },
    ]
    return { pages, tasks: taskRows, summary }
  } finally {
    ac.abort()
    // closing at the end of the bench: a client whose transport already went away has nothing left to close
    await anchorClient.close().catch(() => {})
    await ours.close().catch(() => {})
    await b.stop()
    web.close()
  }
}
