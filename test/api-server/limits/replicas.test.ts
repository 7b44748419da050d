// The abuse limits hold across api-server replicas: two servers on one database share
// each budget (the counters live in Postgres), so spreading requests over replicas buys
// an attacker nothing.
import t from 'tap'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { postLogin } from '../oauth/helpers.ts'

const BUILTIN = 'ncli_nightjar_cli'

const device = (url: string) =>
  fetch(`${url}/oauth/device`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `client_id=${BUILTIN}` })

t.test('POST /oauth/device: two replicas share one budget per address', async (t) => {
  const env = { NIGHTJAR_DEVICE_RATE_LIMIT: '5', NIGHTJAR_DEVICE_RATE_WINDOW_SECONDS: '60' }
  const a = await startTestServer(t, { env })
  const b = await startTestServer(t, { env, sharing: a })
  const statuses: number[] = []
  // alternate between the replicas, as a load balancer would
  for (let i = 0; i < 8; i++) statuses.push((await device(i % 2 ? b.url : a.url)).status)
  t.same(statuses.slice(0, 5), [200, 200, 200, 200, 200], 'the first five, spread over both, are served')
  t.same(statuses.slice(5), [429, 429, 429], 'the budget is spent on both replicas at once')
  const refused = await device(a.url)
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After')
  const rows = (await a.testDb.db.query('select count(*)::int as n from oauth_device_codes')).rows[0].n
  t.equal(rows, 5, 'exactly five device codes exist')
})

t.test('console sign-in: a lockout earned on one replica holds on the other', async (t) => {
  const env = { NIGHTJAR_LOGIN_LOCKOUT_THRESHOLD: '3' }
  const a = await startTestServer(t, { env })
  const b = await startTestServer(t, { env, sharing: a })
  const owner = await a.bootstrap()
  const signIn = (s: TestServer, password: string) => postLogin(s, { email: owner.email, password })
  for (let i = 0; i < 3; i++) t.equal((await signIn(i % 2 ? b : a, 'wrong password')).status, 401, `wrong password ${i + 1}: refused plainly`)
  const locked = await signIn(b, owner.password)
  t.equal(locked.status, 429, 'the right password is refused while the account is locked, on the other replica too')
  t.ok(Number(locked.headers.get('retry-after')) >= 1, 'with Retry-After')
  const rows = (await a.testDb.db.query(`select key from limit_records`)).rows.map((r: { key: string }) => r.key)
  t.ok(rows.length > 0, 'the counters are rows in Postgres')
  t.notOk(rows.some((k: string) => k.includes(owner.email)), 'keys never hold the e-mail in clear')
})
