import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'

const EXPECTED = [
  'session_start', 'spawn_and_start_session', 'session_get', 'session_list', 'session_end',
  'navigate', 'perceive', 'act', 'credential_fill', 'screenshot', 'go_back', 'reload', 'wait_for', 'select_option', 'hover', 'pdf', 'console_messages',
  'identity_list_assumable', 'identity_list', 'credential_list',
  'identity_create', 'identity_delete', 'credential_create', 'credential_rotate', 'credential_delete',
  'grant_list', 'grant_create', 'grant_revoke', 'grant_delete', 'authstate_capture', 'authstate_list',
  'network_list', 'network_create', 'network_update', 'network_rotate_token', 'network_delete', 'network_daemons', 'local_reach_ensure',
]

t.test('the tool protocol', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const client = await mcpClient(t, s.url, acme.apiKey)
  const { tools } = await client.listTools()

  t.test('[LIM-08] [RULE-30] the tool set is closed: exactly the 38 tools', async (t) => {
    t.equal(EXPECTED.length, 38)
    t.same(tools.map((x) => x.name).sort(), [...EXPECTED].sort())
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
    t.same(props('session_start').names, ['browserKind', 'egress', 'fromVersion', 'identity', 'network', 'url', 'viewport', 'warmResume'])
    t.same(props('session_start').required, [])
    t.same(props('session_start').schema.properties.egress.enum.sort(), ['local', 'platform', 'split'])
    t.same(props('spawn_and_start_session').names, ['childName', 'egress', 'identity', 'network', 'viewport'])
    t.same(props('spawn_and_start_session').required, ['childName'])
    t.same(props('identity_list_assumable').names, [])
    t.same(props('navigate').required, ['sessionId', 'url'])
    t.same(props('perceive').names, ['full', 'sessionId'])
    t.same(props('act').names, ['direction', 'key', 'selector', 'sessionId', 'text', 'url', 'verb'])
    t.same(props('act').schema.properties.verb.enum.sort(), ['click', 'goto', 'press', 'scroll', 'type'])
    t.same(props('credential_fill').names, ['credentialName', 'selector', 'sessionId'])
    t.same(props('screenshot').required, ['sessionId'])
    t.same(props('session_end').names, ['sessionId'])
  })
})
