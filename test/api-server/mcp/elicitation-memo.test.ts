// The URL elicitation memo of the stateless /mcp (api-server/mcp/elicitation.ts), alone,
// on a real Postgres: who gets a session id, whose session id counts, whose answers reach a
// waiting call, that a call whose client hung up stops waiting, that what one org holds is
// bounded apart from every other org, and that two memos on one database (two replicas)
// share the memo and route each other's answers. The end-to-end flow through the real SDK
// client is test/api-server/mcp/elicitation.test.ts; the flood over HTTP is
// test/api-server/mcp/elicitation-fairness.test.ts.
import t from 'tap'
import { ElicitationMemo } from '../../../api-server/mcp/elicitation.ts'
import type { AuthContext } from '../../../api-server/auth/context.ts'
import { createTestDb } from '../../helpers/db.ts'
import { bootstrapOrg } from '../../../api-server/auth/orgs.ts'

const init = (capabilities: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'c', version: '1' } } })
const URL_CAPABLE = init({ elicitation: { url: {} } })

t.test('the elicitation memo', async (t) => {
  const { db } = await createTestDb(t)
  let clock = Date.parse('2026-11-27T06:00:00Z')
  const now = () => clock
  const orgA = (await bootstrapOrg(db, { org: 'memo-a', email: 'a@memo.test' })).orgId
  const orgB = (await bootstrapOrg(db, { org: 'memo-b', email: 'b@memo.test' })).orgId
  const auth = (credentialId: string, orgId = orgA): AuthContext => ({
    orgId, agentId: 'nagt_a', scopes: new Set(), principal: { kind: 'key', principalId: 'nagt_a', credentialId, name: 'k' },
  })

  await t.test('a session id only for a client that declared URL elicitation, valid only under its credential', async (t) => {
    const memo = new ElicitationMemo({ db, now })
    t.equal(await memo.remember(auth('nkey_1'), init({})), null, 'no capability: no session id')
    t.equal(await memo.remember(auth('nkey_1'), init({ elicitation: {} })), null, 'form elicitation only: none')
    t.equal(await memo.remember(auth('nkey_1'), init({ elicitation: { form: {} } })), null)
    t.equal(await memo.remember(auth('nkey_1'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }), null, 'not an initialize: none')
    const id = await memo.remember(auth('nkey_1'), URL_CAPABLE)
    t.type(id, 'string')
    t.equal(await memo.canAsk(auth('nkey_1'), id!), true)
    t.equal(await memo.canAsk(auth('nkey_2'), id!), false, 'another credential cannot use it')
    t.equal(await memo.canAsk(auth('nkey_1', orgB), id!), false, 'nor another org')
    t.equal(await memo.canAsk(auth('nkey_1'), 'made-up'), false, 'an unknown id means no elicitation')
    t.equal(await memo.canAsk(auth('nkey_1'), undefined), false)
    clock += 24 * 3600_000 + 1
    t.equal(await memo.canAsk(auth('nkey_1'), id!), false, 'a memo unused for a day is forgotten')
  })

  await t.test('answers reach the call that asked, from its credential only; a hang-up ends the wait', async (t) => {
    const memo = new ElicitationMemo({ db, now })
    const sent: any[] = []
    const delivered = new Set<(v: void) => void>()
    const transport = { send: async (m: any, o?: any) => { sent.push({ m, o }); for (const d of delivered) d() } }
    const nextSend = () => new Promise<void>((resolve) => delivered.add(resolve))
    const hangUp = new AbortController()
    const el = memo.forCall(auth('nkey_1'), transport, 7, 'tok', hangUp.signal)
    const first = nextSend()
    const asked = el.ask({ elicitationId: 'e1', url: 'https://nightjar.example/console/x', message: 'm' })
    await first
    t.equal(sent.length, 1)
    const request = sent[0].m
    t.has(request, { method: 'elicitation/create', params: { mode: 'url', elicitationId: 'e1', url: 'https://nightjar.example/console/x', message: 'm' } })
    t.equal(sent[0].o.relatedRequestId, 7, 'on the call’s own stream')
    t.equal(await memo.takeAnswers(auth('nkey_2'), { jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }), false, 'another credential’s answer is not taken')
    t.equal(await memo.takeAnswers(auth('nkey_1', orgB), { jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }), false, 'nor another org’s')
    t.equal(await memo.takeAnswers(auth('nkey_1'), [{ jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }, { jsonrpc: '2.0', method: 'notifications/initialized' }]), false, 'nor a POST that carries something else too')
    t.equal(await memo.takeAnswers(auth('nkey_1'), { jsonrpc: '2.0', id: request.id, result: { action: 'decline' } }), true)
    t.equal(await asked, 'decline')
    t.equal(await memo.takeAnswers(auth('nkey_1'), { jsonrpc: '2.0', id: request.id, result: { action: 'accept' } }), false, 'answered once, the id is gone')

    await el.complete('e1')
    t.has(sent[1], { m: { method: 'notifications/elicitation/complete', params: { elicitationId: 'e1' } }, o: { relatedRequestId: 7 } })
    await el.progress('waiting')
    t.has(sent[2], { m: { method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } } })

    const fourth = nextSend()
    const second = el.ask({ elicitationId: 'e2', url: 'https://nightjar.example/console/y', message: 'm' })
    await fourth
    hangUp.abort()
    t.equal(await second, null, 'the client hung up: no answer, the wait ends')
    await el.progress('after')
    t.equal(sent.length, 4, 'no progress after a hang-up')
    const left = (await db.query('select count(*)::int as n from mcp_elicitation_answers')).rows[0].n
    t.equal(left, 0, 'a finished wait leaves no row behind')
  })

  await t.test('[ISSUE-40 row 5] one org cannot evict another’s memo: caps per credential and per org', async (t) => {
    const memo = new ElicitationMemo({ db, now, perCredential: 3, perOrg: 5 })
    const kept = await memo.remember(auth('nkey_a'), URL_CAPABLE)
    // org B floods: many memos on one credential, then on many credentials
    const flood: string[] = []
    for (let i = 0; i < 12; i++) { clock += 1; flood.push((await memo.remember(auth('nkey_b1', orgB), URL_CAPABLE))!) }
    for (let i = 0; i < 12; i++) { clock += 1; flood.push((await memo.remember(auth(`nkey_b${i + 2}`, orgB), URL_CAPABLE))!) }
    t.equal(await memo.canAsk(auth('nkey_a'), kept!), true, 'org A’s memo survives org B’s flood')
    const count = async (where: string, args: unknown[]) => (await db.query(`select count(*)::int as n from mcp_elicitation_clients where ${where}`, args)).rows[0].n
    t.equal(await count('org_id = $1', [orgB]), 5, 'org B holds at most its org cap')
    t.equal(await count('org_id = $1', [orgA]), 1)
    t.ok(await memo.canAsk(auth('nkey_b13', orgB), flood.at(-1)!), 'the newest memo of the flooding org works')
    t.equal(await memo.canAsk(auth('nkey_b1', orgB), flood[0]), false, 'its own oldest went')
    // per credential: the credential's least recently used goes, its fresh ones stay
    const mine = []
    for (let i = 0; i < 4; i++) { clock += 1; mine.push((await memo.remember(auth('nkey_a2'), URL_CAPABLE))!) }
    t.equal(await count('org_id = $1 and credential_id = $2', [orgA, 'nkey_a2']), 3, 'one credential holds at most its cap')
    t.equal(await memo.canAsk(auth('nkey_a2'), mine[0]), false)
    t.equal(await memo.canAsk(auth('nkey_a2'), mine[3]), true)
    t.equal(await memo.canAsk(auth('nkey_a'), kept!), true, 'and the org’s other credential keeps its memo')
  })

  await t.test('[ISSUE-40 row 5] two replicas on one database: a memo made on one works on the other, an answer taken by one reaches a call on the other', async (t) => {
    const a = new ElicitationMemo({ db, now })
    const b = new ElicitationMemo({ db, now })
    const id = await a.remember(auth('nkey_r'), URL_CAPABLE)
    t.equal(await b.canAsk(auth('nkey_r'), id!), true, 'the memo is shared')
    const sent: any[] = []
    let delivered!: () => void
    const sentOnce = new Promise<void>((resolve) => { delivered = resolve })
    const el = a.forCall(auth('nkey_r'), { send: async (m: any) => { sent.push(m); delivered() } }, 1, undefined, new AbortController().signal)
    const asked = el.ask({ elicitationId: 'e3', url: 'https://nightjar.example/console/z', message: 'm' })
    await sentOnce
    const started = Date.now()
    t.equal(await b.takeAnswers(auth('nkey_r'), { jsonrpc: '2.0', id: sent[0].id, result: { action: 'cancel' } }), true, 'the other replica takes the answer')
    t.equal(await asked, 'cancel', 'and the call waiting on the first replica gets it')
    t.ok(Date.now() - started < 5000, `within a few polls (${Date.now() - started} ms)`)
  })
})
