// The MCP Inspector's CLI (the pinned devDependency, as published) lists the tools of a running
// server with --strict: its portability check reads every tool's schemas and must find nothing.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../helpers/process.ts'
import { startTestServer } from '../helpers/server.ts'

const CLI = 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js'

const inspector = (args: string[], env: Record<string, string>) => run(process.execPath, [CLI, '--cli', ...args], { env: { ...process.env, ...env } })

t.test('[ISSUE-50] the Inspector CLI lists every tool with --strict and finds no schema problem', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const home = mkdtempSync(join(tmpdir(), 'nightjar-inspector-'))
  t.teardown(() => rmSync(home, { recursive: true, force: true }))
  const run = await inspector(
    [`${s.url}/mcp`, '--transport', 'http', '--method', 'tools/list', '--strict', '--header', `Authorization: Bearer ${acme.apiKey}`],
    { HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json') },
  )
  const names = (JSON.parse(run.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)
  t.ok(names.includes('navigate') && names.includes('evaluate'), `the tools are listed (${names.length})`)
  t.equal(run.code, 0, 'the CLI exits 0')
  // the key is in the command line only: nothing the CLI prints carries it
  t.equal(run.stderr.includes(acme.apiKey), false, 'stderr holds no secret')
  t.equal(run.stderr.trim(), '', 'no portability warning or error on stderr')
})
