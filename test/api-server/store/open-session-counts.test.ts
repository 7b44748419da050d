// Admission reads kept counts of open sessions (migration 027) instead of counting rows per
// start. These tests hold the counts to the rows they stand for: through every kind of write
// a session row gets, across an upgrade from a database that already has open sessions, and
// under a burst of concurrent starts and ends on separate connections.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { createTestDb } from '../../helpers/db.ts'
import { migrate, type Db } from '../../../api-server/store/db.ts'

const LOCK = '31079213967436148'

async function addOrg(db: Db, name: string): Promise<{ orgId: string; agentId: string }> {
  const orgId = `norg_${name}_${randomBytes(4).toString('hex')}`
  const agentId = `nagt_${name}_${randomBytes(4).toString('hex')}`
  await db.query('insert into orgs (id, name) values ($1, $2)', [orgId, orgId])
  await db.query('insert into agents (id, org_id, name) values ($1, $2, $3)', [agentId, orgId, 'agent'])
  return { orgId, agentId }
}

/** one start through admission's function, as the api-server calls it; its verdict */
async function admit(db: Pick<Db, 'query'>, org: { orgId: string; agentId: string }, limits: { org: number; total: number }): Promise<{ verdict: string; id: string }> {
  const id = 'nses_' + randomBytes(8).toString('hex')
  const r = await db.query(
    `select nightjar_admit_start($1, $2, $3, $4, $5, $6, $7, 'direct', null, null, null, null, 'chromium', null, null, now(), null, null, null) as answer`,
    [LOCK, limits.org, limits.total, id, org.orgId, org.agentId, JSON.stringify({ kind: 'agent', id: org.agentId })],
  )
  return { verdict: (r.rows[0].answer as { verdict: string }).verdict, id }
}

/** the kept counts beside the rows they count; equal when the triggers did their work */
async function counts(db: Pick<Db, 'query'>): Promise<{ kept: Record<string, number>; rows: Record<string, number>; keptTotal: number; rowsTotal: number }> {
  const kept = (await db.query('select org_id, open from open_sessions_by_org where open <> 0')).rows
  const rows = (await db.query(`select org_id, count(*)::int as open from sessions where status in ('pending', 'live') group by org_id`)).rows
  const keptTotal = (await db.query('select open from open_sessions_total')).rows[0]?.open as number
  const rowsTotal = rows.reduce((n, r) => n + (r.open as number), 0)
  const byOrg = (list: Array<Record<string, unknown>>) => Object.fromEntries(list.map((r) => [r.org_id as string, r.open as number]))
  return { kept: byOrg(kept), rows: byOrg(rows), keptTotal, rowsTotal }
}

async function assertCounts(t: Test, db: Db, what: string): Promise<void> {
  const c = await counts(db)
  t.same(c.kept, c.rows, `${what}: each org's kept count is its open rows`)
  t.equal(c.keptTotal, c.rowsTotal, `${what}: the kept total is every open row (${c.rowsTotal})`)
}

t.test('the kept counts follow every write a session row gets: start, live, end, fail, delete, an org deleted', async (t) => {
  const { db } = await createTestDb(t)
  const acme = await addOrg(db, 'acme')
  const globex = await addOrg(db, 'globex')
  const limits = { org: 100, total: 1000 }
  const a = await Promise.all([1, 2, 3, 4].map(() => admit(db, acme, limits)))
  const g = await Promise.all([1, 2, 3].map(() => admit(db, globex, limits)))
  t.ok([...a, ...g].every((x) => x.verdict === 'admitted'))
  await assertCounts(t, db, 'seven starts')
  await db.query(`update sessions set status = 'live', live_at = now() where id = any($1)`, [[a[0]!.id, g[0]!.id]])
  await assertCounts(t, db, 'two went live')
  await db.query(`update sessions set last_active_at = now() where id = $1`, [a[0]!.id])
  await assertCounts(t, db, 'a driving call')
  await db.query(`update sessions set status = 'ended', ended_at = now() where id = $1`, [a[0]!.id])
  await db.query(`update sessions set status = 'failed', failure_reason = 'NodeLost' where id = $1`, [a[1]!.id])
  await assertCounts(t, db, 'one ended, one failed')
  // an ended row written again (a second end reason) closes nothing twice
  await db.query(`update sessions set status = 'ended' where id = $1`, [a[0]!.id])
  await db.query('delete from sessions where id = any($1)', [[a[0]!.id, a[2]!.id]])
  await assertCounts(t, db, 'an ended and an open row deleted')
  t.same((await counts(db)).kept, { [acme.orgId]: 1, [globex.orgId]: 3 }, 'acme has one open session left, globex three')
  await db.query('delete from orgs where id = $1', [globex.orgId])
  await assertCounts(t, db, 'globex deleted with its sessions')
  t.equal((await counts(db)).keptTotal, 1, "the deployment's total lost globex's three")
})

t.test('admission refuses at the org quota and at the total from the kept counts, and an end frees a place', async (t) => {
  const { db } = await createTestDb(t)
  const acme = await addOrg(db, 'acme')
  const globex = await addOrg(db, 'globex')
  const started = []
  for (let i = 0; i < 3; i++) started.push(await admit(db, acme, { org: 3, total: 5 }))
  t.same(started.map((x) => x.verdict), ['admitted', 'admitted', 'admitted'])
  t.equal((await admit(db, acme, { org: 3, total: 5 })).verdict, 'org_session_quota', "acme's fourth is over its quota")
  t.equal((await admit(db, globex, { org: 3, total: 5 })).verdict, 'admitted')
  t.equal((await admit(db, globex, { org: 3, total: 5 })).verdict, 'admitted')
  t.equal((await admit(db, globex, { org: 3, total: 5 })).verdict, 'session_capacity', 'the sixth is over the total')
  await db.query(`update sessions set status = 'ended' where id = $1`, [started[0]!.id])
  t.equal((await admit(db, acme, { org: 3, total: 5 })).verdict, 'admitted', 'an ended session gives its place back')
  t.equal((await db.query(`select count(*)::int as n from sessions`)).rows[0].n, 6, 'a refusal leaves no row (six admitted)')
})

t.test('a burst of starts and ends on ten connections: exactly the quota admitted, and the counts match the rows', async (t) => {
  const { db } = await createTestDb(t)
  const acme = await addOrg(db, 'acme')
  const globex = await addOrg(db, 'globex')
  // the test pool's ten connections: the starts really race for the lock
  const pool = db
  const first = await Promise.all(Array.from({ length: 40 }, (_, i) => admit(pool, i % 2 ? acme : globex, { org: 7, total: 12 })))
  const admitted = first.filter((x) => x.verdict === 'admitted')
  t.equal(admitted.length, 12, `exactly the total admitted (${first.map((x) => x.verdict[0]).join('')})`)
  await assertCounts(t, db, 'after the first burst')
  // half end while a second burst starts: every end's place is taken at most once
  const ending = admitted.slice(0, 6)
  const [, starts] = await Promise.all([
    Promise.all(ending.map((x) => db.query(`update sessions set status = 'ended' where id = $1`, [x.id]))),
    Promise.all(Array.from({ length: 20 }, (_, i) => admit(pool, i % 2 ? acme : globex, { org: 7, total: 12 }))),
  ])
  const open = (await db.query(`select count(*)::int as n from sessions where status in ('pending', 'live')`)).rows[0].n as number
  t.ok(open <= 12, `never more open than the total (${open})`)
  t.equal(starts.filter((x) => x.verdict === 'admitted').length, open - 6, 'each start admitted took a place an end freed')
  await assertCounts(t, db, 'after ends racing starts')
})

t.test('an upgrade from a database with open sessions fills the counts, so the quota holds at once', async (t) => {
  // a database migrated to the migration before this one, with sessions in every status
  const { db, url } = await createTestDb(t, { migrations: 26 })
  const before = (await db.query('select name from nightjar_migrations order by id')).rows as Array<{ name: string }>
  t.equal(before.at(-1)?.name, '026_webhook_secret_rotation', 'the database stands at 026')
  const acme = await addOrg(db, 'acme')
  const globex = await addOrg(db, 'globex')
  for (let i = 0; i < 3; i++) t.equal((await admit(db, acme, { org: 3, total: 100 })).verdict, 'admitted')
  const g = await admit(db, globex, { org: 3, total: 100 })
  await db.query(`update sessions set status = 'ended' where id = $1`, [g.id])
  await admit(db, globex, { org: 3, total: 100 })
  t.equal((await migrate(url))[0], '027_open_session_counts', 'the upgrade runs this migration first')
  await assertCounts(t, db, 'after the upgrade')
  t.same((await counts(db)).kept, { [acme.orgId]: 3, [globex.orgId]: 1 })
  t.equal((await admit(db, acme, { org: 3, total: 100 })).verdict, 'org_session_quota', 'acme is at its quota already')
  t.equal((await admit(db, globex, { org: 3, total: 100 })).verdict, 'admitted')
})
