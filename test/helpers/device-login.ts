// An agent logged in with the real OAuth device flow (RFC 8628), over HTTP: the agent asks
// for a code and polls, a human signs in to the console, opens the verification page with
// the code and approves it (posting the page's own form, CSRF token included), and the
// agent's next poll gets the token pair. Built on the OAuth tests' helpers
// (test/api-server/oauth/helpers.ts). The token is returned, never printed.
import type { TestServer } from './server.ts'
import { BUILTIN, DEVICE_GRANT, consoleLogin, getPage, hiddenFields, me, postForm } from '../api-server/oauth/helpers.ts'

export interface DeviceLogin {
  /** the njo_ access token (a secret: compare it, never print it) */
  accessToken: string
  /** the developer agent the grant is bound to (GET /v1/me) */
  agentId: string
  scopes: string[]
}

export async function deviceLogin(s: TestServer, human: { email: string; password?: string }, o: { workspace?: string; scope?: string } = {}): Promise<DeviceLogin> {
  const start = await postForm(s, '/oauth/device', { client_id: BUILTIN, workspace: o.workspace, scope: o.scope })
  if (start.status !== 200) throw new Error(`device authorization answered ${start.status}`)
  const { device_code: deviceCode, user_code: userCode } = start.body as { device_code: string; user_code: string }
  const poll = () => postForm(s, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: BUILTIN })

  const pending = await poll()
  if (pending.body?.error !== 'authorization_pending') throw new Error(`first poll: expected authorization_pending, got ${pending.status} ${pending.body?.error}`)

  // the human: signs in, opens the verification page with the code, approves
  const cookie = await consoleLogin(s, human)
  const page = await getPage(s, `/oauth/authorize?user_code=${encodeURIComponent(userCode)}`, cookie)
  if (page.status !== 200) throw new Error(`verification page answered ${page.status}`)
  const approved = await postForm(s, '/oauth/authorize', { ...hiddenFields(page.text), decision: 'approve' }, { cookie })
  if (approved.status !== 200) throw new Error(`approval answered ${approved.status}`)

  const tokens = await poll()
  if (tokens.status !== 200) throw new Error(`token poll answered ${tokens.status} ${tokens.body?.error}`)
  const accessToken = tokens.body.access_token as string
  const who = await me(s, accessToken)
  if (who.status !== 200) throw new Error(`/v1/me answered ${who.status}`)
  return { accessToken, agentId: who.body.agentId, scopes: who.body.scopes }
}
