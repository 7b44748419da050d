import t from 'tap'
import { spawnSync } from 'node:child_process'
import { createTestDb } from '../../helpers/db.ts'
import { migrate } from '../../../api-server/store/db.ts'

t.test('migrations run twice are a no-op, and concurrent runs serialise on the advisory lock', async (t) => {
  const { db, url } = await createTestDb(t)
  const before = (await db.query('select name from nightjar_migrations order by id')).rows.map((r) => r.name)
  t.ok(before.includes('001_foundation'))
  t.same(await migrate(url), [], 'second run applies nothing')
  const both = await Promise.all([migrate(url), migrate(url)])
  t.same(both, [[], []])
  const after = (await db.query('select name from nightjar_migrations order by id')).rows.map((r) => r.name)
  t.same(after, before)
})

t.test('admin bootstrap works against the same database from the CLI', async (t) => {
  const { db, url } = await createTestDb(t)
  const run = (args: string[]) => spawnSync(process.execPath, ['bin/nightjar.mjs', 'admin', ...args], { env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8' })
  const r = run(['bootstrap', '--org', 'acme', '--email', 'owner@acme.test', '--json'])
  t.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.same(Object.keys(out).sort(), ['agentId', 'apiKey', 'email', 'orgId', 'password', 'userId'])
  t.match(out.agentId, /^nagt_/, 'the agent a grant names')
  t.match(out.apiKey, /^njk_/)
  t.match(out.orgId, /^norg_[0-9A-Za-z]{22}$/)
  const again = run(['bootstrap', '--org', 'acme', '--email', 'other@acme.test'])
  t.equal(again.status, 1)
  t.match(again.stderr, /an org named acme exists/)
  const orgs = (await db.query('select count(*)::int as n from orgs')).rows[0].n
  t.equal(orgs, 1, 'a failed bootstrap leaves nothing behind')
  const usage = run(['bootstrap', '--org', 'x'])
  t.equal(usage.status, 2)
  t.match(usage.stderr, /usage: nightjar admin bootstrap/)
})
