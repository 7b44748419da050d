// Every console form refuses what REST refuses, in REST's words, and never answers 500:
// a NUL in any field or path segment, a lone surrogate (a JSON body), and a few inputs
// the operation's own schema refuses (compared with what REST answers the same input).
// The table is checked against Fastify's route table: a console POST route missing from
// it fails here, so a new form cannot arrive without these checks. Pages with an id in
// their address are read from the route table too, each refusing a NUL there.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { startTestServer } from '../../helpers/server.ts'
import { consoleLogin, hiddenFields, loginForm, postLogin } from '../oauth/helpers.ts'
import { errors } from '../../../contracts/errors.ts'

/** Fastify's routes of one method, as registered ("/console/reach/:grantId/revoke"), read from its own route tree. */
function routesOf(app: FastifyInstance, method: 'GET' | 'POST'): string[] {
  const out: string[] = []
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false, method }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line)
    if (!m) continue
    stack.length = m[1].length / 4
    stack.push(m[2])
    if (m[3]?.split(', ').includes(method)) out.push(stack.join(''))
  }
  return out
}

const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
const NUL = '\u0000'
const LONE = '\ud800'

/** A console form: where it posts, a good set of fields, and its REST twin (the operation the form runs), if any. */
interface Form {
  path: string
  fields: Record<string, string>
  /** REST's call for these form fields (the form's own mapping of fields to the operation's input) */
  rest?: (f: Record<string, string>) => { method: string; path: string; body?: Record<string, unknown> }
  /** inputs the operation's schema refuses, each compared with REST's answer to the same input */
  bad?: Array<[string, Record<string, string>]>
}

t.test('[FLD-07] every console form refuses what REST refuses, in its words, never with a 500', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const base = s.config.consolePath
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const ident = (await rest('POST', '/v1/identities', { name: 'shop' })).body.id as string
  const cred = (await rest('POST', `/v1/identities/${ident}/credentials`, { name: 'pw', value: 'pw-1234567', originAllowlist: ['login.example.com'] })).body.id as string
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
  const grant = (await rest('POST', `/v1/identities/${ident}/grants`, {
    principalAgentId: acme.agentId, role: 'assume', expiresAt, allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: 'tests',
  })).body.id as string
  const net = (await rest('POST', '/v1/networks', { name: 'dev' })).body.network.id as string
  const reach = (await rest('POST', '/v1/local-reach/grants', { agentId: acme.agentId })).body.id as string
  t.ok([ident, cred, grant, net, reach].every((id) => /^n[a-z]+_/.test(id)), 'the ids the forms act on exist')
  const cookie = await consoleLogin(s, acme)
  const csrf = hiddenFields(await (await fetch(`${s.url}${base}/keys`, { headers: { cookie } })).text()).csrf
  const lines = (v: string) => v.split(/[\s,]+/).filter(Boolean)
  const session = 'nsess_doesnotmatter'

  const grantFields = { principalAgentId: acme.agentId, role: 'assume', expiresAt, allowedOrigins: '', propagation: 'same_conversation', maxSessionDurationSecs: '', reason: 'tests' }
  const FORMS: Record<string, Form> = {
    [`${base}/keys`]: {
      path: `${base}/keys`, fields: { name: 'bot', scopes: 'sessions:read', agent: acme.agentId },
      rest: (f) => ({ method: 'POST', path: '/v1/keys', body: { name: f.name, scopes: [f.scopes], agent: f.agent } }),
      bad: [['a name of Braille blanks', { name: '\u2800\u2800\u2800' }], ['a name of one em space', { name: '\u2003' }]],
    },
    [`${base}/reach`]: {
      path: `${base}/reach`, fields: { agentId: acme.agentId, networkId: net },
      rest: (f) => ({ method: 'POST', path: '/v1/local-reach/grants', body: { agentId: f.agentId, networkId: f.networkId } }),
      bad: [['an agent id that is not one', { agentId: 'agent-7' }], ['a network id that is not one', { networkId: 'dev' }]],
    },
    [`${base}/reach/:grantId/revoke`]: {
      path: `${base}/reach/${reach}/revoke`, fields: {},
      rest: () => ({ method: 'POST', path: `/v1/local-reach/grants/${reach}/revoke` }),
    },
    [`${base}/sessions/:id/take`]: { path: `${base}/sessions/${session}/take`, fields: {} },
    [`${base}/sessions/:id/hand-back`]: { path: `${base}/sessions/${session}/hand-back`, fields: {} },
    [`${base}/sessions/:id/shares`]: { path: `${base}/sessions/${session}/shares`, fields: { ttl: '60' } },
    [`${base}/sessions/:id/shares/:shareId/revoke`]: { path: `${base}/sessions/${session}/shares/nshr_x/revoke`, fields: {} },
    [`${base}/credential-requests/:id`]: { path: `${base}/credential-requests/ncreq_x`, fields: { kind: 'password', value: 'pw-1234567' } },
    [`${base}/identities`]: {
      path: `${base}/identities`, fields: { name: 'shop2', defaultOpenMode: 'exclusive' },
      rest: (f) => ({ method: 'POST', path: '/v1/identities', body: f }),
      bad: [['a name with a right-to-left override', { name: 'shop\u202e' }]],
    },
    [`${base}/identities/:identityId/delete`]: {
      path: `${base}/identities/${ident}/delete`, fields: {}, rest: () => ({ method: 'DELETE', path: `/v1/identities/${ident}` }),
    },
    [`${base}/identities/:identityId/credentials`]: {
      path: `${base}/identities/${ident}/credentials`, fields: { name: 'pw2', kind: 'password', value: 'pw-1234567', originAllowlist: 'login.example.com' },
      rest: (f) => ({ method: 'POST', path: `/v1/identities/${ident}/credentials`, body: { ...f, originAllowlist: lines(f.originAllowlist) } }),
      bad: [['a host with a right-to-left override', { originAllowlist: 'evil\u202e.test' }], ['an empty secret', { value: '' }]],
    },
    [`${base}/identities/:identityId/credentials/:credentialId/rotate`]: {
      path: `${base}/identities/${ident}/credentials/${cred}/rotate`, fields: { value: 'pw-7654321' },
      rest: (f) => ({ method: 'POST', path: `/v1/identities/${ident}/credentials/${cred}/rotate`, body: f }),
      bad: [['a secret over 4096 characters', { value: 'x'.repeat(4097) }]],
    },
    [`${base}/identities/:identityId/credentials/:credentialId/delete`]: {
      path: `${base}/identities/${ident}/credentials/${cred}/delete`, fields: {},
      rest: () => ({ method: 'DELETE', path: `/v1/identities/${ident}/credentials/${cred}` }),
    },
    [`${base}/identities/:identityId/grants`]: {
      path: `${base}/identities/${ident}/grants`, fields: grantFields,
      rest: (f) => ({
        method: 'POST', path: `/v1/identities/${ident}/grants`,
        body: { ...f, allowedOrigins: lines(f.allowedOrigins), maxSessionDurationSecs: f.maxSessionDurationSecs === '' ? null : f.maxSessionDurationSecs },
      }),
      bad: [['a reason of Braille blanks', { reason: '\u2800\u2800' }], ['a reason with a Hangul filler', { reason: 'ok\u3164' }]],
    },
    [`${base}/identities/:identityId/grants/:grantId/revoke`]: {
      path: `${base}/identities/${ident}/grants/${grant}/revoke`, fields: {},
      rest: () => ({ method: 'POST', path: `/v1/identities/${ident}/grants/${grant}/revoke` }),
    },
    [`${base}/identities/:identityId/grants/:grantId/delete`]: {
      path: `${base}/identities/${ident}/grants/${grant}/delete`, fields: { confirm: 'yes' },
      rest: (f) => ({ method: 'DELETE', path: `/v1/identities/${ident}/grants/${grant}`, body: f }),
    },
    [`${base}/networks`]: {
      path: `${base}/networks`, fields: { name: 'dev2' },
      rest: (f) => ({ method: 'POST', path: '/v1/networks', body: f }),
      bad: [['a name of ideographic spaces', { name: '\u3000\u3000' }], ['a name of Braille blanks', { name: '\u2800' }]],
    },
    [`${base}/networks/:networkId/hosts`]: {
      path: `${base}/networks/${net}/hosts`, fields: { declaredHosts: 'localhost:3000' },
      rest: (f) => ({ method: 'PATCH', path: `/v1/networks/${net}`, body: { declaredHosts: lines(f.declaredHosts) } }),
    },
    [`${base}/networks/:networkId/rotate`]: { path: `${base}/networks/${net}/rotate`, fields: {}, rest: () => ({ method: 'POST', path: `/v1/networks/${net}/rotate-token` }) },
    [`${base}/networks/:networkId/delete`]: { path: `${base}/networks/${net}/delete`, fields: {}, rest: () => ({ method: 'DELETE', path: `/v1/networks/${net}` }) },
    [`${base}/governance`]: {
      path: `${base}/governance`, fields: { cloakEnabled: 'on', declaredAdvisorOrigins: '', proxyHosts: 'proxy.example.com:3128' },
      rest: (f) => ({
        method: 'PUT', path: '/v1/governance',
        body: { credential_freetext_fill: false, cloakEnabled: f.cloakEnabled === 'on', recordSessions: false, declaredAdvisorOrigins: lines(f.declaredAdvisorOrigins), proxyHosts: lines(f.proxyHosts) },
      }),
      bad: [['a proxy host with a right-to-left override', { proxyHosts: 'proxy\u202e.example.com' }]],
    },
    [`${base}/webhooks`]: {
      path: `${base}/webhooks`, fields: { url: 'https://hooks.example.com/in', events: 'session.ended', description: 'ops' },
      rest: (f) => ({ method: 'POST', path: '/v1/webhooks', body: { url: f.url, events: [f.events], description: f.description } }),
    },
    [`${base}/webhooks/:webhookId/rotate`]: {
      path: `${base}/webhooks/nwh_x/rotate`, fields: {}, rest: () => ({ method: 'POST', path: '/v1/webhooks/nwh_x/rotate-secret' }),
    },
    [`${base}/webhooks/:webhookId/enable`]: {
      path: `${base}/webhooks/nwh_x/enable`, fields: {}, rest: () => ({ method: 'POST', path: '/v1/webhooks/nwh_x/enable' }),
    },
    [`${base}/webhooks/:webhookId/delete`]: {
      path: `${base}/webhooks/nwh_x/delete`, fields: {}, rest: () => ({ method: 'DELETE', path: '/v1/webhooks/nwh_x' }),
    },
    [`${base}/logout`]: { path: `${base}/logout`, fields: { note: 'bye' } },
  }

  /** The console's answer: its status and the words of its alert. */
  const post = async (path: string, body: Record<string, string>, json = false) => {
    const res = await fetch(s.url + path, {
      method: 'POST', redirect: 'manual',
      headers: { cookie, origin: s.url, 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: json ? JSON.stringify({ csrf, ...body }) : new URLSearchParams({ csrf, ...body }),
    })
    const text = await res.text()
    return { status: res.status, alert: unescape(/<p class="error" role="alert">([^<]*)<\/p>/.exec(text)?.[1] ?? '') }
  }
  /** What REST answers: its status and message. */
  const restSays = async (call: { method: string; path: string; body?: Record<string, unknown> }) => {
    const r = await rest(call.method, call.path, call.body)
    return { status: r.status, alert: r.body?.error?.message ?? `(no error: ${r.status})` }
  }
  /**
   * REST's words for a bad string: its twin's answer to the same fields (REST's first check
   * reads them before the operation's schema maps anything), or the catalogue's words when
   * the form has no twin or the twin reads no body (a DELETE).
   */
  const hygiene = async (form: Form, where: { field: string; fields: Record<string, string> } | { param: string; restPath: string }, rule: string) => {
    const twin = form.rest?.(form.fields)
    if (twin && 'restPath' in where) return restSays({ method: twin.method, path: where.restPath })
    if (twin && 'fields' in where && twin.method !== 'DELETE') return restSays({ method: twin.method, path: twin.path, body: where.fields })
    return { status: 400, alert: errors.invalidRequest(`${'field' in where ? where.field : where.param}: ${rule}`).message }
  }

  await t.test('the table holds every console form the server has', async (t) => {
    const routes = routesOf(s.app, 'POST').filter((r) => r.startsWith(`${base}/`) && r !== `${base}/login`)
    t.ok(routes.length >= 20, `${routes.length} console forms found in the route table`)
    t.same(routes.sort(), Object.keys(FORMS).sort(), 'every console POST route is in the table (a new form needs its row)')
  })

  // forms that end or remove something go last, sign-out the very last: were one not refused,
  // it would take away what the rows after it post to
  const rank = (route: string) => (route.endsWith('/logout') ? 2 : /\/(delete|revoke|rotate|take|hand-back)$/.test(route) ? 1 : 0)
  for (const [route, form] of Object.entries(FORMS).sort(([a], [b]) => rank(a) - rank(b))) {
    await t.test(route, async (t) => {
      for (const name of Object.keys(form.fields)) {
        const fields = { ...form.fields, [name]: form.fields[name] + NUL }
        const expected = await hygiene(form, { field: name, fields }, 'contains a NUL character')
        t.same(await post(form.path, fields), expected, `a NUL in ${name}: ${expected.status} ${expected.alert}`)
      }
      // a NUL in each id of the path: REST's twin gets it in the same place
      const ids = form.path.slice(base.length).split('/').filter((seg) => /^n[a-z]+_/.test(seg))
      for (const id of ids) {
        const path = form.path.replace(id, `${id}%00`)
        const param = route.split('/')[form.path.split('/').indexOf(id)].slice(1)
        const restPath = form.rest?.(form.fields).path.replace(id, `${id}%00`) ?? ''
        const expected = await hygiene(form, { param, restPath }, 'contains a NUL character')
        t.same(await post(path, form.fields), expected, `a NUL in the path's ${param}: ${expected.status} ${expected.alert}`)
      }
      if (!Object.keys(form.fields).length && !ids.length) t.fail('a form with no field and no id: the table gives it nothing to refuse')
      // a lone surrogate cannot be percent-encoded into a form, but a JSON body carries one
      const first = Object.keys(form.fields)[0] ?? 'note'
      const lone = { ...form.fields, [first]: LONE }
      const loneExpected = await hygiene(form, { field: first, fields: lone }, 'contains an unpaired UTF-16 surrogate')
      t.same(await post(form.path, lone, true), loneExpected, `a lone surrogate in ${first} (JSON body): ${loneExpected.alert}`)
      for (const [what, over] of form.bad ?? []) {
        const fields = { ...form.fields, ...over }
        const expected = await restSays(form.rest!(fields))
        t.equal(expected.status, 400, `REST refuses ${what}`)
        t.same(await post(form.path, fields), expected, `${what}: ${expected.alert}`)
      }
    })
  }

  await t.test('every console page with an id in its address refuses a NUL there, as REST does, never with a 500', async (t) => {
    const pages = routesOf(s.app, 'GET').filter((r) => r.startsWith(`${base}/`) && r.includes('/:'))
    t.ok(pages.length >= 5, `${pages.length} console pages with ids in their address`)
    for (const route of pages) {
      for (const param of route.split('/').filter((seg) => seg.startsWith(':'))) {
        const path = route.split('/').map((seg) => (seg === param ? 'nx_1%00' : seg.startsWith(':') ? 'nx_1' : seg)).join('/')
        const words = errors.invalidRequest(`${param.slice(1)}: contains a NUL character`).message
        const page = await fetch(s.url + path, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' })
        const alert = unescape(/<p class="error" role="alert">([^<]*)<\/p>/.exec(await page.text())?.[1] ?? '')
        t.same({ status: page.status, alert }, { status: 400, alert: words }, `${route}, a NUL in ${param}: the page says ${words}`)
        const script = await fetch(s.url + path, { headers: { cookie }, redirect: 'manual' })
        const body = await script.json().catch(() => null)
        t.same({ status: script.status, message: body?.error?.message }, { status: 400, message: words }, `${route}, asked without text/html: the API's JSON`)
      }
    }
  })

  await t.test(`${base}/login: a NUL in what the form looks up is refused, never a 500`, async (t) => {
    for (const field of ['email', 'password'] as const) {
      const values = { email: acme.email, password: acme.password, [field]: `${field === 'email' ? acme.email : acme.password}${NUL}` }
      const r = await postLogin(s, values, { form: await loginForm(s) })
      const alert = unescape(/<p class="error" role="alert">([^<]*)<\/p>/.exec(r.text)?.[1] ?? '')
      t.same({ status: r.status, alert }, { status: 400, alert: `invalid request: ${field}: contains a NUL character` }, field)
    }
    t.equal((await postLogin(s, { email: acme.email, password: acme.password, next: `/x${NUL}y` })).status, 303, 'next is made safe, not refused: the sign-in goes on')
  })
})
