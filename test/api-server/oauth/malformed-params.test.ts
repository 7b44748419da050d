// OAuth's doors hold every parameter to the REST door's first check: a NUL (or a lone
// surrogate) is refused as invalid_request (a page for a person, RFC 6749's JSON for a
// client), never a 500 from the database refusing the text. Real HTTP, form-encoded as
// clients and browsers send it.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { BUILTIN, consoleLogin, getPage, pkce, postForm } from './helpers.ts'

t.test('[ISSUE-46] a NUL in an OAuth parameter is invalid_request, never a 500', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const { challenge } = pkce()
  // a lone surrogate cannot travel form- or URL-encoded (it arrives as U+FFFD): NUL can
  const BAD = [`${BUILTIN}\u0000`, `\u0000`]

  t.test('authorize, GET and POST: a page that names the parameter', async (t) => {
    for (const clientId of BAD) {
      const q = new URLSearchParams({ client_id: clientId, redirect_uri: 'http://127.0.0.1:1/cb', response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' })
      const got = await getPage(s, `/oauth/authorize?${q}`, cookie)
      t.equal(got.status, 400, `GET: ${JSON.stringify(clientId.slice(-1))}`)
      t.match(got.text, /client_id must not contain NUL or unpaired surrogate characters/)
      const posted = await postForm(s, '/oauth/authorize', Object.fromEntries(q), { cookie, origin: s.url })
      t.equal(posted.status, 400, `POST: ${JSON.stringify(clientId.slice(-1))}`)
    }
  })

  t.test('device and token: RFC 6749 JSON errors', async (t) => {
    for (const clientId of BAD) {
      const device = await postForm(s, '/oauth/device', { client_id: clientId })
      t.equal(device.status, 400)
      t.same(device.body, { error: 'invalid_request', error_description: 'parameter client_id must not contain NUL or unpaired surrogate characters' })
      const token = await postForm(s, '/oauth/token', { grant_type: 'refresh_token', client_id: BUILTIN, refresh_token: `njr_${clientId}` })
      t.equal(token.status, 400, 'token')
      t.equal(token.body?.error, 'invalid_request')
    }
  })
})
