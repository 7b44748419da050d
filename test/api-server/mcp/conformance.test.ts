// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against a
// real Nightjar server, per scenario. The suite connects without credentials, so it talks
// to a loopback relay that adds the test key and forwards everything else untouched (Host
// and Origin too, so the DNS-rebinding scenario meets the server's own check, not a 401).
// Scenarios run: SCENARIOS; not run, and why: NOT_APPLICABLE.
import t from 'tap'
import { spawn } from 'node:child_process'
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { startTestServer } from '../../helpers/server.ts'
import { node24 } from './node24.ts'

export const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const

/** Every server scenario of the pinned suite that is not run, with the reason. */
export const NOT_APPLICABLE: Record<string, string> = {
  'logging-set-level': 'no logging capability: the server sends no log notifications',
  'completion-complete': 'no completions capability (no prompts or resource templates to complete)',
  'tools-call-simple-text': "needs the suite's test tool test_simple_text; the tool set is closed (38 tools)",
  'tools-call-image': "needs the suite's test tool test_image_content",
  'tools-call-audio': "needs the suite's test tool test_audio_content",
  'tools-call-embedded-resource': "needs the suite's test tool test_embedded_resource",
  'tools-call-mixed-content': "needs the suite's test tool test_multiple_content_types",
  'tools-call-with-logging': "needs the suite's test tool test_tool_with_logging and a logging capability",
  'tools-call-error': "needs the suite's test tool test_error_handling",
  'tools-call-with-progress': "needs the suite's test tool test_tool_with_progress",
  'tools-call-sampling': "needs the suite's test tool test_sampling (server→client sampling)",
  'tools-call-elicitation': "needs the suite's test tool test_elicitation",
  'json-schema-2020-12': "needs the suite's test tool json_schema_2020_12_tool",
  'elicitation-sep1034-defaults': "needs the suite's elicitation test tool",
  'elicitation-sep1330-enums': "needs the suite's elicitation test tool",
  'server-sse-polling': "needs the suite's test_reconnection tool and MCP sessions; /mcp is stateless with JSON responses",
  'server-sse-multiple-streams': 'needs MCP sessions (Mcp-Session-Id); /mcp is stateless and answers with only a warning',
  'resources-list': 'no resources capability',
  'resources-read-text': 'no resources capability',
  'resources-read-binary': 'no resources capability',
  'resources-templates-read': 'no resources capability',
  'resources-subscribe': 'no resources capability',
  'resources-unsubscribe': 'no resources capability',
  'prompts-list': 'no prompts capability',
  'prompts-get-simple': 'no prompts capability',
  'prompts-get-with-args': 'no prompts capability',
  'prompts-get-embedded-resource': 'no prompts capability',
  'prompts-get-with-image': 'no prompts capability',
}

const require = createRequire(import.meta.url)
const CLI = join(require.resolve('@modelcontextprotocol/conformance/package.json'), '..', 'dist', 'index.js')

/** A loopback relay to `target` that adds an Authorization header and changes nothing else. */
async function authRelay(t: { teardown(fn: () => unknown): void }, target: URL, token: string): Promise<number> {
  const relay = createServer((req: IncomingMessage, res: ServerResponse) => {
    const up = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers)
        upRes.pipe(res)
      },
    )
    up.on('error', () => { res.writeHead(502).end() })
    req.pipe(up)
  })
  await new Promise<void>((res) => relay.listen(0, '127.0.0.1', res))
  t.teardown(() => new Promise<void>((res) => { relay.closeAllConnections(); relay.close(() => res()) }))
  return (relay.address() as { port: number }).port
}

interface Check { id: string; name: string; status: string; errorMessage?: string }

function runScenario(node: string, url: string, scenario: string, outDir: string): Promise<{ code: number | null; output: string; checks: Check[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [CLI, 'server', '--url', url, '--scenario', scenario, '-o', outDir], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d) => { output += d })
    child.stderr.on('data', (d) => { output += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      const dir = readdirSync(outDir).find((d) => d.startsWith(`server-${scenario}-`))
      const checks = dir ? (JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as Check[]) : []
      resolve({ code, output, checks })
    })
  })
}

t.test('the MCP conformance suite, server scenarios that apply', async (t) => {
  const node = node24()
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const port = await authRelay(t, new URL(s.url), acme.apiKey)
  const outDir = mkdtempSync(join(tmpdir(), 'nightjar-conformance-'))
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }))

  await t.test('every server scenario of the pinned suite is either run or listed as not applicable', async (t) => {
    const list = await new Promise<string>((resolve) => {
      const child = spawn(node, [CLI, 'list'], { stdio: ['ignore', 'pipe', 'ignore'] })
      let out = ''
      child.stdout.on('data', (d) => { out += d })
      child.on('close', () => resolve(out))
    })
    const serverPart = list.split(/Client scenarios/)[0]
    const names = [...serverPart.matchAll(/^\s*-\s+([a-z0-9-]+)\s/gm)].map((m) => m[1])
    t.ok(names.length > 10, 'the suite lists its server scenarios')
    for (const name of names) t.ok((SCENARIOS as readonly string[]).includes(name) || name in NOT_APPLICABLE, `${name} is accounted for`)
  })

  // one CLI run per scenario, all at once (each takes about a second)
  const runs = await Promise.all(SCENARIOS.map((sc) => runScenario(node, `http://localhost:${port}/mcp`, sc, outDir)))
  SCENARIOS.forEach((scenario, i) => {
    const run = runs[i]
    t.test(`conformance: ${scenario}`, async (t) => {
      t.ok(run.checks.length > 0, 'the scenario reported checks')
      for (const c of run.checks) t.equal(c.status, 'SUCCESS', `${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`)
      t.equal(run.code, 0, 'the CLI exits 0')
    })
  })

  t.test('[dns-rebinding-protection] checks both directions', async (t) => {
    const i = SCENARIOS.indexOf('dns-rebinding-protection')
    const ids = runs[i].checks.map((c) => c.id).sort()
    t.same(ids, ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'])
  })
})
