// Credential requests without a browser: the REST door's answers, and
// the rules of a request — single use, bound to its org and identity, expiring — checked
// on the domain functions the console page calls, with a clock the test moves. The browser
// and MCP side is test/api-server/mcp/elicitation.test.ts.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { answerCredentialRequest, requireOpenRequest, waitAnswered } from '../../../api-server/personas/credential-requests.ts'

t.test('credential requests', async (t) => {
  let clock = Date.parse('2026-11-27T06:00:00Z')
  const s = await startTestServer(t, { now: () => clock })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  const ident = await rest('POST', '/v1/identities', { name: 'shop' })
  const { db } = s.services
  /** the status a refused promise carries (0 when it was not refused) */
  const refusal = (p: Promise<unknown>) => p.then(() => 0, (e: { status?: number }) => e.status ?? -1)
  const answer = (requestId: string, orgId = acme.orgId, value = 'a-password-1') =>
    answerCredentialRequest(s.services, { orgId, requestId, userId: acme.userId, kind: 'password', value, now: clock })

  t.test('[LIM-09] [ERR-19] over REST: 201 pending with the console URL; refusals as for a credential create', async (t) => {
    const r = await rest('POST', '/v1/credential-requests', { identity: 'shop', credentialName: 'login', originAllowlist: ['Shop.Example.com'], reason: 'sign in' })
    t.equal(r.status, 201)
    t.has(r.body, { identityId: ident.body.id, credentialName: 'login', status: 'pending', elicited: false, expiresAt: new Date(clock + 600_000).toISOString() })
    t.equal(r.body.url, `${s.url}/console/credential-requests/${r.body.id}`)
    t.match(r.body.id, /^ncreq_[0-9A-Za-z]{22}$/)
    const empty = await rest('POST', '/v1/credential-requests', { identity: 'shop', credentialName: 'x', originAllowlist: [], reason: 'r' })
    t.equal(empty.status, 400)
    const unknown = await rest('POST', '/v1/credential-requests', { identity: 'nobody', credentialName: 'x', originAllowlist: ['a.example'], reason: 'r' })
    const foreign = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'x', originAllowlist: ['a.example'], reason: 'r' }, other.apiKey)
    t.equal(unknown.status, 404)
    t.same(foreign.body, unknown.body, 'another org’s identity is the unknown one')
    const noValue = await rest('POST', '/v1/credential-requests', { identity: 'shop', credentialName: 'x', originAllowlist: ['a.example'], reason: 'r', value: 'secret' })
    t.equal(noValue.status, 400, 'a request carries no value')
  })

  t.test('[INV-04] single use, of one org, expiring; a saved request made the credential', async (t) => {
    const r = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'otp', originAllowlist: ['shop.example.com'], reason: 'second factor' })
    const id = r.body.id
    t.equal(await refusal(answer(id, other.orgId)), 404, 'another org cannot answer it')
    t.equal((await requireOpenRequest(db, acme.orgId, id, clock)).credentialName, 'otp')
    const cred = await answer(id)
    t.has(cred, { name: 'otp', kind: 'password', originAllowlist: ['shop.example.com'], identityId: ident.body.id })
    const list = await rest('GET', `/v1/identities/${ident.body.id}/credentials`)
    t.same(list.body.map((c: any) => c.name), ['otp'], 'credential_list shows it')
    t.equal(await refusal(answer(id)), 404, 'answered once, it is gone')
    t.equal(await refusal(requireOpenRequest(db, acme.orgId, id, clock)), 404)
    t.equal(await waitAnswered(db, acme.orgId, id, clock), true, 'the wait sees it answered')
    const dup = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'otp', originAllowlist: ['shop.example.com'], reason: 'again' })
    t.equal(dup.status, 409, 'a request cannot replace a credential')

    const late = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'late', originAllowlist: ['shop.example.com'], reason: 'r' })
    clock += 600_000
    t.equal(await refusal(requireOpenRequest(db, acme.orgId, late.body.id, clock)), 404, 'expired after the TTL')
    t.equal(await refusal(answer(late.body.id)), 404)
    t.equal(await waitAnswered(db, acme.orgId, late.body.id, clock, undefined, () => clock), false, 'a wait past the deadline ends unanswered')
    clock += 86_400_000 + 1000
    await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'later', originAllowlist: ['shop.example.com'], reason: 'r' })
    const kept = (await db.query('select id from credential_requests where org_id = $1', [acme.orgId])).rows.map((x) => x.id)
    t.notOk(kept.includes(late.body.id), 'a request expired over a day ago is deleted by the next request of its org')
    const audit = await rest('GET', '/v1/audit?action=credential.requested')
    t.ok(audit.body.items.length >= 3 && audit.body.items.every((a: any) => a.credentialName && a.identityId === ident.body.id), 'each request is audited by name')
  })

  t.test('a malformed TOTP value leaves the request open', async (t) => {
    const r = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'totp2', originAllowlist: ['shop.example.com'], reason: 'r' })
    t.equal(await refusal(answerCredentialRequest(s.services, { orgId: acme.orgId, requestId: r.body.id, userId: acme.userId, kind: 'totp', value: 'not a seed', now: clock })), 400)
    t.equal((await requireOpenRequest(db, acme.orgId, r.body.id, clock)).credentialName, 'totp2', 'still open')
  })
})
