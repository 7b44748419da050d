import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { contracts } from '../../../contracts/operations/index.ts'
import { OAUTH_DEFAULT_SCOPES } from '../../../api-server/auth/scopes.ts'
import { readFileSync } from 'node:fs'

// The 38: the spec's ten, the session lifecycle, driving, and the toolbox
// agents ask for; request_human took resize's place (resize stays in REST), and
// credential_request took go_forward's (go_forward stays in REST). Authoring (identities, credentials, grants, auth-states, networks)
// is REST, the SDK, the CLI and the console: it never passes an agent's context.
const EXPECTED = [
  'identity_list_assumable', 'credential_list', 'credential_request',
  'session_start', 'spawn_and_start_session', 'session_get', 'session_list', 'session_end', 'session_cdp', 'request_human',
  'navigate', 'perceive', 'act', 'credential_fill', 'screenshot', 'go_back', 'reload', 'wait_for', 'select_option', 'hover', 'pdf', 'console_messages',
  'tab_list', 'tab_open', 'tab_select', 'tab_close', 'dialog_handle',
  'drag', 'mouse_click', 'mouse_move', 'mouse_wheel', 'fill_form',
  'file_upload', 'file_list', 'file_read',
  'network_requests', 'evaluate',
  'local_reach_ensure',
]
/** the tools an OAuth-logged-in agent cannot call with its clamped scopes alone, and why */
const BEYOND_OAUTH: Record<string, string> = {
  evaluate: 'page JavaScript is a read path around the sealed fill: its own scope, never granted over OAuth',
}

t.test('the tool protocol', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const client = await mcpClient(t, s.url, acme.apiKey)
  const { tools } = await client.listTools()

  t.test('[LIM-08] [RULE-30] the tool set is closed: exactly the 38 tools', async (t) => {
    t.equal(EXPECTED.length, 38)
    t.same(tools.map((x) => x.name).sort(), [...EXPECTED].sort())
  })

  t.test('every tool carries all four MCP annotations', async (t) => {
    for (const tool of tools) {
      const a = (tool.annotations ?? {}) as Record<string, unknown>
      t.same(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].filter((k) => typeof a[k] !== 'boolean'), [], `${tool.name} has every hint`)
    }
  })

  t.test('an OAuth-logged-in agent can call every tool but evaluate with its clamped scopes', async (t) => {
    for (const c of contracts.filter((c) => c.mcp !== false)) {
      const beyond = c.scopes.filter((s) => !OAUTH_DEFAULT_SCOPES.includes(s as never))
      if (BEYOND_OAUTH[c.name]) t.ok(beyond.length > 0, `${c.name}: ${BEYOND_OAUTH[c.name]}`)
      else t.same(beyond, [], `${c.name} needs only OAuth scopes`)
    }
  })

  t.test('[RULE-30] no tool takes the agent as input; every input schema is closed', async (t) => {
    for (const tool of tools) {
      const schema = tool.inputSchema as { properties?: Record<string, unknown>; additionalProperties?: unknown }
      t.equal(schema.additionalProperties, false, `${tool.name} is closed`)
      const props = Object.keys(schema.properties ?? {})
      t.notOk(props.some((p) => /^agent(Id)?$/i.test(p)), `${tool.name} has no agent input`)
    }
  })

  t.test('[EP-32] [EP-33] [EP-34] [EP-35] [EP-36] [EP-37] [EP-39] [EP-40] the spec’s tool inputs', async (t) => {
    const props = (name: string) => {
      const schema = tools.find((x) => x.name === name)!.inputSchema as { properties: Record<string, any>; required?: string[] }
      return { names: Object.keys(schema.properties).sort(), required: [...(schema.required ?? [])].sort(), schema }
    }
    // extended: waitSeconds, how long session_start waits before answering pending
    t.same(props('session_start').names, ['browserKind', 'egress', 'fromVersion', 'identity', 'network', 'url', 'viewport', 'waitSeconds', 'warmResume'])
    t.same(props('session_start').required, [])
    t.same(props('session_start').schema.properties.egress.enum.sort(), ['local', 'platform', 'split'])
    t.same(props('spawn_and_start_session').names, ['childName', 'egress', 'identity', 'network', 'viewport'])
    t.same(props('spawn_and_start_session').required, ['childName'])
    t.same(props('identity_list_assumable').names, [])
    t.same(props('navigate').required, ['sessionId', 'url'])
    // extended: refs, budgets and changes (every input the spec names is still there, none required newly)
    t.same(props('perceive').names, ['cursor', 'full', 'maxChars', 'query', 'ref', 'sessionId'])
    t.same(props('perceive').required, ['sessionId'])
    t.same(props('act').names, ['changes', 'direction', 'key', 'ref', 'selector', 'sessionId', 'text', 'url', 'verb'])
    t.same(props('act').schema.properties.verb.enum.sort(), ['click', 'goto', 'press', 'scroll', 'type'])
    // the field by selector or by ref from perceive, exactly one (checked at the call: refused 400 otherwise)
    t.same(props('credential_fill').names, ['changes', 'credentialName', 'ref', 'selector', 'sessionId'])
    t.same(props('credential_fill').required, ['credentialName', 'sessionId'])
    t.same(props('screenshot').required, ['sessionId'])
    t.same(props('session_end').names, ['sessionId'])
    t.same(props('request_human').names, ['reason', 'sessionId'])
    t.same(props('request_human').required, ['reason', 'sessionId'])
  })
})

t.test('the table of the 38 (docs/sessions.md) says what the contracts say: name, scope and REST route', async (t) => {
  const readme = readFileSync(new URL('../../../docs/sessions.md', import.meta.url), 'utf8')
  const table = readme.slice(readme.indexOf('<!-- tools:begin -->'), readme.indexOf('<!-- tools:end -->'))
  const rows = table.split('\n').filter((l) => l.startsWith('| `')).map((l) => l.split('|').map((c) => c.trim()))
  t.same(rows.map((r) => r[1].replace(/`/g, '')), EXPECTED, 'every tool, in the contracts’ order')
  for (const r of rows) {
    const c = contracts.find((x) => x.name === r[1].replace(/`/g, ''))
    if (!c) continue
    t.ok(r[2].startsWith(c.scopes.map((s) => `\`${s}\``).join(' ')), `${c.name}: scope ${c.scopes.join(' ')}`)
    t.equal(r[3], `${c.rest!.method} ${c.rest!.path.replace(/^\/v1/, '')}`, `${c.name}: REST route`)
    t.ok(r[4].length > 10, `${c.name}: says why`)
  }
})
