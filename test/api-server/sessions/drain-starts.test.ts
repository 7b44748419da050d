// A replica shutting down with a session start in flight (a rollout, a scale-in): the caller
// waiting on it is answered at once, 202 pending, instead of being cut at the drain deadline,
// and the start itself goes on and goes live before the process lets go of it. Real
// Chromium, a cold launch (no warm pool), the embedded plane.
import t from 'tap'
import { closeGracefully } from '../../../api-server/http/drain.ts'
import { startTestServer } from '../../helpers/server.ts'
import { waitFor } from '../../helpers/wait.ts'

t.test('[ISSUE-38] a start in flight when the server drains: its waiting caller gets 202 pending at once, and the start still goes live', async (t) => {
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_WARM_POOL_SIZE: '0', NIGHTJAR_WARM_POOL_MAX: '0' } })
  const org = await s.bootstrap()
  const answer = s.request('POST', '/v1/sessions', { token: org.apiKey, body: {}, headers: { prefer: 'wait=90' } })
  // the start is under way: its row is there, pending, while its browser launches cold
  const id = await waitFor(async () => {
    const rows = (await s.testDb.db.query(`select id from sessions where status = 'pending'`)).rows
    return rows[0]?.id as string | undefined
  }, { what: 'the start under way' })
  const closing = closeGracefully(s.app, 60_000)
  const asked = performance.now()
  const r = await answer
  t.equal(r.status, 202, 'the waiting caller is answered, not cut')
  t.match(r.body, { id, status: 'pending' }, 'with the session as it stands')
  t.equal(r.headers.get('location'), `${s.config.baseUrl}/v1/sessions/${id}`, 'and where to follow it')
  t.ok(performance.now() - asked < 5000, 'at once, not at the start\'s end')
  await closing
  const row = (await s.testDb.db.query('select status, live_at from sessions where id = $1', [id])).rows[0]
  t.ok(row.live_at, `the start went live before the server let go (now ${row.status})`)
  t.notOk(s.logs().includes('still in flight at the drain deadline'), 'no start was left to another replica')
})
