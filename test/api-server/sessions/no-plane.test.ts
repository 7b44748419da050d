// A process built without a session plane: Services is whole all the same (explicit
// stand-ins, never a missing field), sessions answer the one 503 before doing any work,
// and networks work as rows.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { startTestServer } from '../../helpers/server.ts'
import { NO_SESSIONS } from '../../../api-server/sessions/runtime.ts'
import { build } from '../../../api-server/app.ts'

t.test('without a session plane', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const req = (method: string, path: string, body?: unknown) => s.request(method, path, { token: org.apiKey, body })

  t.test('every Services field is set when build() returns', async (t) => {
    for (const [key, value] of Object.entries(s.services)) t.not(value, undefined, key)
    t.equal(s.services.sessions, NO_SESSIONS, 'the explicit stand-in')
    let thrown: unknown
    try { void s.services.sessions.pods } catch (e) { thrown = e }
    t.match(thrown, { status: 503, reason: 'no_session_plane' }, 'every use of it is the one 503')
  })

  t.test('session_start answers 503 and leaves no row', async (t) => {
    const r = await req('POST', '/v1/sessions', {})
    t.equal(r.status, 503)
    t.equal(r.body.error.code, 'unavailable')
    t.equal(r.body.error.reason, 'no_session_plane')
    t.equal((await s.testDb.db.query('select count(*)::int as n from sessions')).rows[0].n, 0, 'refused before any work')
    t.equal((await req('POST', '/v1/sessions', {})).status, 503, 'and no launch slot was kept')
  })

  t.test('session_end answers the same 503', async (t) => {
    const r = await req('DELETE', '/v1/sessions/nsess_Nope1')
    t.equal(r.status, 503)
    t.equal(r.body.error.reason, 'no_session_plane')
  })

  t.test('networks are rows: create, update and delete work', async (t) => {
    const created = await req('POST', '/v1/networks', { name: 'dev' })
    t.equal(created.status, 201)
    const id = created.body.network.id
    t.equal((await req('PATCH', `/v1/networks/${id}`, { declaredHosts: ['localhost:3000'] })).status, 200)
    t.equal((await req('DELETE', `/v1/networks/${id}`)).status, 204)
  })
})

t.test('a session plane that does not start: build() refuses with the reason', async (t) => {
  const s = await startTestServer(t)
  const failing = async () => { throw new Error('no browser found at /nowhere') }
  await t.rejects(
    build({ config: s.config, db: s.testDb.db, cookieKey: randomBytes(32), logStream: new PassThrough().resume(), plane: failing }),
    { message: 'the session plane did not start: no browser found at /nowhere' },
  )
})
