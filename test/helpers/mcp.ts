// The real MCP SDK client over Streamable HTTP with a Bearer credential.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

export async function mcpClient(t: { teardown(fn: () => unknown): void }, baseUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'nightjar-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(baseUrl + '/mcp'), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  })
  await client.connect(transport)
  t.teardown(() => client.close())
  return client
}
