// The consent page says what a client asked for that will not be granted, and why; asking
// again for a refused scope gets the same page and the same grant, never a loop.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { consentScopes } from '../../../api-server/oauth/consent-scopes.ts'
import { ROLE_SCOPES } from '../../../api-server/auth/scopes.ts'
import { authorizeUrl, consent, consoleLogin, DEFAULT_SCOPES, getPage, pkce, postForm } from './helpers.ts'

const text = (pageHtml: string) => pageHtml.replace(/<[^>]+>/g, ' ').replace(/&#39;/g, "'").replace(/\s+/g, ' ')

t.test('[ISSUE-50] [AUTH-09] what a consent grants of what was asked, and why the rest is not', async (t) => {
  const owner = consentScopes('sessions:write sessions:evaluate keys:write sessions:evaluate made-up', new Set(ROLE_SCOPES.owner), 'owner')
  t.same(owner.granted, DEFAULT_SCOPES, 'the default set, whatever was asked')
  t.same(owner.refused.map((r) => r.scope), ['sessions:evaluate', 'keys:write'], 'each refused scope once')
  t.match(owner.refused[0].why, /OAuth sign-in never grants it; an API key made in the console can carry it/)
  t.equal(owner.unknown, 1)
  const lacking = consentScopes(DEFAULT_SCOPES.join(' '), new Set(['sessions:write', 'sessions:drive']), 'member')
  t.same(lacking.granted, ['sessions:write', 'sessions:drive'])
  t.same(lacking.refused, [{ scope: 'identities:read', why: 'your role (member) does not hold it' }])
  t.same(consentScopes(undefined, new Set(ROLE_SCOPES.owner), 'owner').refused, [], 'nothing asked: nothing refused')
})

t.test('[ISSUE-50] [AUTH-09] the consent page shows the refused scopes with why; re-asking grants the same', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const { challenge, verifier } = pkce()
  const scope = [...DEFAULT_SCOPES, 'sessions:evaluate', '<b>approve-me</b>'].join(' ')
  const page = await getPage(s, authorizeUrl({ challenge, scope }), cookie)
  t.equal(page.status, 200)
  const shown = text(page.text)
  t.match(shown, /It will be allowed to: sessions:write —/)
  t.match(shown, /It also asked for the following, which will not be granted whatever you choose: sessions:evaluate — an OAuth sign-in never grants it; an API key made in the console can carry it 1 requested name is not a Nightjar scope It cannot/)
  t.notOk(page.text.includes('approve-me'), 'a name the client made up is counted, never echoed')

  const plain = await getPage(s, authorizeUrl({ challenge, scope: DEFAULT_SCOPES.join(' ') }), cookie)
  t.notOk(plain.text.includes('id="not-granted"'), 'nothing refused: no such section')

  // the second ask, as a client stepping up would: the same three scopes, so it has no reason to ask a third time
  for (const attempt of [1, 2]) {
    const loc = await consent(s, cookie, { challenge, scope, redirectUri: 'http://127.0.0.1:9/callback' })
    const r = await postForm(s, '/oauth/token', { grant_type: 'authorization_code', code: loc.searchParams.get('code')!, code_verifier: verifier, client_id: 'ncli_nightjar_cli', redirect_uri: 'http://127.0.0.1:9/callback' })
    t.equal(r.status, 200)
    t.equal(r.body.scope, DEFAULT_SCOPES.join(' '), `ask ${attempt}: the default set`)
  }
})
