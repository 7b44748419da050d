// PgDataKeyStore against real Postgres (the run's throwaway cluster, migrated).
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import t from 'tap'
import { LocalKmsProvider } from '../../../api-server/kms/local.ts'
import { PgDataKeyStore } from '../../../api-server/kms/pg-store.ts'
import { Sealer } from '../../../api-server/kms/sealer.ts'
import { createTestDb } from '../../helpers/db.ts'
import { failureOf, rejection, tempDir } from './helpers.ts'

t.test('pg store: get, putIfAbsent keeps the first key, provider recorded', async (t) => {
  const { db } = await createTestDb(t)
  const store = new PgDataKeyStore(db, 'local')
  t.equal(await store.get('norg_a'), null)
  const k1 = randomBytes(61)
  const k2 = randomBytes(61)
  t.ok((await store.putIfAbsent('norg_a', k1)).equals(k1), 'first put wins')
  t.ok((await store.putIfAbsent('norg_a', k2)).equals(k1), 'second put returns the stored key')
  t.ok((await store.get('norg_a'))!.equals(k1))
  const row = await db.query('select provider, created_at from org_data_keys where org_id = $1', ['norg_a'])
  t.equal(row.rows[0].provider, 'local')
  t.ok(row.rows[0].created_at instanceof Date)
})

t.test('pg store: concurrent putIfAbsent on one org all return the single winner', async (t) => {
  const { db } = await createTestDb(t)
  const store = new PgDataKeyStore(db, 'local')
  const candidates = Array.from({ length: 12 }, () => randomBytes(61))
  const results = await Promise.all(candidates.map((k) => store.putIfAbsent('norg_race', k)))
  const winner = results[0]
  t.ok(results.every((r) => r.equals(winner)), 'every caller got the same key')
  t.ok(candidates.some((c) => c.equals(winner)), 'the winner is one of the candidates')
  const count = await db.query('select count(*)::int as n from org_data_keys')
  t.equal(count.rows[0].n, 1)
})

t.test('pg store: a key wrapped by another provider is refused, not unwrapped', async (t) => {
  const { db } = await createTestDb(t)
  await new PgDataKeyStore(db, 'aws').putIfAbsent('norg_a', randomBytes(40))
  const local = new PgDataKeyStore(db, 'local')
  t.equal(failureOf(await rejection(local.get('norg_a'))), 'provider_mismatch')
  t.equal(failureOf(await rejection(local.putIfAbsent('norg_a', randomBytes(61)))), 'provider_mismatch')
})

t.test('pg store: two replicas sealing concurrently share one data key', async (t) => {
  const { db } = await createTestDb(t)
  const keyFile = join(await tempDir(t), 'kms.key')
  const a = new Sealer(new LocalKmsProvider(keyFile), new PgDataKeyStore(db, 'local'))
  const b = new Sealer(new LocalKmsProvider(keyFile), new PgDataKeyStore(db, 'local'))
  const ctx = (i: number) => ({ orgId: 'norg_a', kind: 'credential', ids: ['nident_1', `ncred_${i}`] })
  const sealed = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).seal(ctx(i), Buffer.from(`v${i}`))))
  const cold = new Sealer(new LocalKmsProvider(keyFile), new PgDataKeyStore(db, 'local'))
  for (let i = 0; i < sealed.length; i++) {
    const out = await cold.open(ctx(i), sealed[i])
    t.ok(out.equals(Buffer.from(`v${i}`)))
  }
  const count = await db.query('select count(*)::int as n from org_data_keys')
  t.equal(count.rows[0].n, 1)
})
