import t from 'tap'
import { strToU8, zipSync } from 'fflate'
import { readFileSync } from 'node:fs'
import type { z } from 'zod'
import { startTestServer } from '../helpers/server.ts'
import { Nightjar, NightjarError, type FetchLike, type InputOf, type OperationName, type OutputOf } from '../../sdk/index.ts'
import { methodPlans, renderSdk } from '../../scripts/gen-sdk.ts'
import { contracts, type ContractOf } from '../../contracts/operations/index.ts'

/**
 * The SDK's generated types say what the contracts' zod schemas say, operation by operation:
 * every input the SDK lets a caller write is one the contract accepts (a coerced query field
 * is unknown to zod, a number to the SDK), and its outputs are exactly the contract's.
 */
type Within<A, B> = [A] extends [B] ? true : false
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Fidelity = { [N in OperationName]: [Within<InputOf<N>, z.input<ContractOf<N>['input']>>, Same<OutputOf<N>, z.output<ContractOf<N>['output']>>] }
/** the operations whose generated types differ from the contract's: tsc names them */
type Drifted = { [N in OperationName as Fidelity[N] extends [true, true] ? never : N]: Fidelity[N] }

t.test('the generated routes and methods match the contracts', async (t) => {
  t.equal(readFileSync(new URL('../../sdk/generated.ts', import.meta.url), 'utf8'), renderSdk(), 'run node --import tsx scripts/gen-sdk.ts')
})

t.test('every operation has a method that calls its route', async (t) => {
  const sent: Array<{ method: string; url: URL; body: unknown }> = []
  const fakeFetch: FetchLike = async (url, init) => {
    sent.push({ method: init.method, url: new URL(url), body: init.body ? JSON.parse(init.body) : undefined })
    return new Response('{}', { status: 200 })
  }
  const nj = new Nightjar({ baseUrl: 'http://sdk.test/', token: 'njk_test', fetch: fakeFetch })
  const withRest = contracts.filter((c) => c.rest)
  const plans = methodPlans()
  t.same(plans.map((p) => p.operation), withRest.map((c) => c.name), 'one method per operation with a REST route, in order')
  const groups = nj as unknown as Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>>
  const listed = Object.entries(groups).filter(([, g]) => g && typeof g === 'object').flatMap(([name, g]) => Object.keys(g).map((m) => `${name}.${m}`))
  t.same(listed.sort(), plans.map((p) => `${p.group}.${p.method}`).sort(), 'no method beyond the operations')
  for (const [i, p] of plans.entries()) {
    const c = withRest[i]
    const fn = groups[p.group]?.[p.method]
    t.type(fn, 'function', `${p.group}.${p.method} (${p.operation})`)
    const args: unknown[] = p.positional.map((k) => `v-${k}`)
    if (p.rest.length) args.push({})
    await fn(...args)
    const req = sent.at(-1)!
    t.equal(req.method, c.rest!.method, `${p.operation}: method`)
    t.equal(req.url.pathname, c.rest!.path.replace(/:([A-Za-z]+)/g, 'v-$1'), `${p.operation}: path`)
    const params = [...c.rest!.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
    const fields = Object.fromEntries(p.positional.filter((k) => !params.includes(k)).map((k) => [k, `v-${k}`]))
    if (c.rest!.method === 'GET' || c.rest!.method === 'DELETE') t.equal(req.url.search, '', `${p.operation}: no query`)
    else t.same(req.body, fields, `${p.operation}: body`)
  }
  t.equal(sent.length, plans.length)
})

t.test('[ISSUE-50] methods are typed from the contracts, optional inputs optional', async (t) => {
  // compile-time: tsc checks these (the test typechecks with the rest of the repo)
  const typed = (nj: Nightjar) => ({
    nav: nj.sessions.navigate('nsess_x', 'https://example.com/') satisfies Promise<OutputOf<'navigate'>>,
    gone: nj.identities.delete('nid_x') satisfies Promise<void>,
    // @ts-expect-error url is required
    bad: nj.sessions.navigate('nsess_x'),
    // every field of these inputs is optional: the input may be left out
    page: nj.sessions.perceive('nsess_x') satisfies Promise<OutputOf<'perceive'>>,
    shot: nj.sessions.screenshot('nsess_x'),
    // @ts-expect-error wait_for waits for exactly one of ref, selector or text: it needs its input
    wait: nj.sessions.waitFor('nsess_x'),
  })
  t.type(typed, 'function')
  const drifted: Drifted = {}
  t.same(drifted, {}, 'no operation whose generated types differ from its contract (tsc checks it)')
})

t.test('the SDK against a real server', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const nj = new Nightjar({ baseUrl: s.url, token: acme.apiKey })

  t.test('[RULE-32] sessions.create takes identity and an optional agent defaulting to the credential agent', async (t) => {
    const ident = await nj.identities.create({ name: 'sdk-persona' })
    await s.request('POST', `/v1/identities/${ident.id}/grants`, {
      token: acme.apiKey,
      body: { principalAgentId: acme.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(), allowedOrigins: [], propagation: 'none', maxSessionDurationSecs: null, reason: 'sdk test' },
    })
    const a = await nj.sessions.create({ identity: ident.id })
    t.equal(a.openedBy.principalId, acme.agentId)
    t.equal(a.identity, ident.id)
    await nj.sessions.end(a.id)
    const b = await nj.sessions.create({ identity: ident.id, agent: '' })
    t.equal(b.openedBy.principalId, acme.agentId, 'an empty agent string gives the same default')
    const nav = await nj.sessions.navigate(b.id, 'data:text/html,<title>sdk</title>')
    t.equal(nav.title, 'sdk')
    await nj.sessions.end(b.id)
  })

  t.test('[ISSUE-51] extensions: upload, trust, and a session that loads one, through the SDK', async (t) => {
    const zip = zipSync({
      'manifest.json': strToU8(JSON.stringify({ manifest_version: 3, name: 'SDK marker', version: '1', content_scripts: [{ matches: ['https://*/*'], js: ['c.js'] }] })),
      'c.js': strToU8('document.body.dataset.sdk = "1"'),
    })
    const ext = await nj.extensions.upload({ zipBase64: Buffer.from(zip).toString('base64') })
    t.match(ext, { name: 'SDK marker', trusted: false, contentScripts: [{ matches: ['https://*/*'] }] })
    t.equal((await nj.extensions.trust(ext.id, { trusted: true })).trusted, true)
    t.same((await nj.extensions.list()).items.map((e) => e.id), [ext.id])
    const session = await nj.sessions.create({ extensions: [ext.id] })
    t.same(session.extensions, [ext.id])
    await nj.sessions.end(session.id)
    const refused = await nj.extensions.upload({ zipBase64: Buffer.from('no zip').toString('base64') }).catch((e) => e)
    t.ok(refused instanceof NightjarError)
    t.equal(refused.status, 400)
  })

  t.test('errors come back typed', async (t) => {
    const err = await nj.sessions.get('nsess_0000000000000000000000').catch((e) => e)
    t.ok(err instanceof NightjarError)
    t.equal(err.status, 404)
    t.equal(err.message, 'unknown session')
  })
})
