// The URL elicitation memo of the stateless /mcp (api-server/mcp/elicitation.ts), alone:
// who gets a session id, whose session id counts, whose answers reach a waiting call, and
// that a call whose client hung up stops waiting. The end-to-end flow through the real SDK
// client is test/api-server/mcp/elicitation.test.ts.
import t from 'tap'
import { ElicitationMemo } from '../../../api-server/mcp/elicitation.ts'
import type { AuthContext } from '../../../api-server/auth/context.ts'

const auth = (credentialId: string, orgId = 'norg_a'): AuthContext => ({
  orgId, agentId: 'nagt_a', scopes: new Set(), principal: { kind: 'key', principalId: 'nagt_a', credentialId, name: 'k' },
})
const init = (capabilities: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'c', version: '1' } } })

t.test('a session id only for a client that declared URL elicitation, valid only under its credential', async (t) => {
  const memo = new ElicitationMemo()
  t.equal(memo.remember(auth('nkey_1'), init({})), null, 'no capability: no session id')
  t.equal(memo.remember(auth('nkey_1'), init({ elicitation: {} })), null, 'form elicitation only: none')
  t.equal(memo.remember(auth('nkey_1'), init({ elicitation: { form: {} } })), null)
  t.equal(memo.remember(auth('nkey_1'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }), null, 'not an initialize: none')
  const id = memo.remember(auth('nkey_1'), init({ elicitation: { url: {} } }))
  t.type(id, 'string')
  t.equal(memo.canAsk(auth('nkey_1'), id!), true)
  t.equal(memo.canAsk(auth('nkey_2'), id!), false, 'another credential cannot use it')
  t.equal(memo.canAsk(auth('nkey_1', 'norg_b'), id!), false, 'nor another org')
  t.equal(memo.canAsk(auth('nkey_1'), 'made-up'), false, 'an unknown id means no elicitation')
  t.equal(memo.canAsk(auth('nkey_1'), undefined), false)
})

t.test('answers reach the call that asked, from its credential only; a hang-up ends the wait', async (t) => {
  const memo = new ElicitationMemo()
  const sent: any[] = []
  const transport = { send: async (m: any, o?: any) => { sent.push({ m, o }) } }
  const hangUp = new AbortController()
  const el = memo.forCall(auth('nkey_1'), transport, 7, 'tok', hangUp.signal)
  const asked = el.ask({ elicitationId: 'e1', url: 'https://nightjar.example/console/x', message: 'm' })
  await new Promise<void>((resolve) => setImmediate(resolve))
  t.equal(sent.length, 1)
  const request = sent[0].m
  t.has(request, { method: 'elicitation/create', params: { mode: 'url', elicitationId: 'e1', url: 'https://nightjar.example/console/x', message: 'm' } })
  t.equal(sent[0].o.relatedRequestId, 7, 'on the call’s own stream')
  t.equal(memo.takeAnswers(auth('nkey_2'), { jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }), false, 'another credential’s answer is not taken')
  t.equal(memo.takeAnswers(auth('nkey_1'), [{ jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }, { jsonrpc: '2.0', method: 'notifications/initialized' }]), false, 'nor a POST that carries something else too')
  t.equal(memo.takeAnswers(auth('nkey_1'), { jsonrpc: '2.0', id: request.id, result: { action: 'decline' } }), true)
  t.equal(await asked, 'decline')
  t.equal(memo.takeAnswers(auth('nkey_1'), { jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }), false, 'answered once, the id is gone')

  await el.complete('e1')
  t.has(sent[1], { m: { method: 'notifications/elicitation/complete', params: { elicitationId: 'e1' } }, o: { relatedRequestId: 7 } })
  await el.progress('waiting')
  t.has(sent[2], { m: { method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } } })

  const second = el.ask({ elicitationId: 'e2', url: 'https://nightjar.example/console/y', message: 'm' })
  hangUp.abort()
  t.equal(await second, null, 'the client hung up: no answer, the wait ends')
  await el.progress('after')
  t.equal(sent.length, 4, 'no progress after a hang-up')
})
