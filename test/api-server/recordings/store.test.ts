// The RecordingStore port, both adapters: a directory under the data dir, and S3 through
// @aws-sdk/client-s3 at the wire against s3rver (an S3-compatible server in this process,
// on 127.0.0.1). Then the retention sweep: recordings older than the retention are
// deleted, blobs and row, by an injected clock (no waiting).
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from 's3rver'
import { DirectoryRecordingStore, S3RecordingStore, type RecordingStore } from '../../../api-server/recordings/store.ts'
import { chunkKey, getRecording, insertRecording, readTimeline, sweepRecordings } from '../../../api-server/recordings/service.ts'
import { insertSession } from '../../../api-server/sessions/store.ts'
import { newId } from '../../../contracts/ids.ts'
import { startTestServer } from '../../helpers/server.ts'

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-rec-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function roundTrip(t: Test, store: RecordingStore) {
  const a = Buffer.from(JSON.stringify([{ type: 4, data: { href: 'http://example.com/' } }]))
  const b = Buffer.from(JSON.stringify([{ type: 2, data: {} }]))
  await store.put('norg_1/nsess_1/0000000002.json', b)
  await store.put('norg_1/nsess_1/0000000001.json', a)
  await store.put('norg_1/nsess_2/0000000001.json', a)
  t.same(await store.list('norg_1/nsess_1'), ['norg_1/nsess_1/0000000001.json', 'norg_1/nsess_1/0000000002.json'], 'listed in order, only under the prefix')
  t.ok((await store.get('norg_1/nsess_1/0000000001.json'))?.equals(a), 'the bytes come back')
  t.equal(await store.get('norg_1/nsess_1/0000000009.json'), null, 'a missing blob is null')
  await store.put('norg_1/nsess_1/0000000001.json', b)
  t.ok((await store.get('norg_1/nsess_1/0000000001.json'))?.equals(b), 'a put overwrites (reads are idempotent)')
  await store.deletePrefix('norg_1/nsess_1')
  t.same(await store.list('norg_1/nsess_1'), [], 'deleted')
  t.same(await store.list('norg_1/nsess_2'), ['norg_1/nsess_2/0000000001.json'], 'another recording is untouched')
  await store.deletePrefix('norg_1/nothing')
  await t.rejects(store.put('../escape/x.json', a), /invalid recording key/, 'a key never leaves the store')
  await t.rejects(store.get('norg_1/../../x'), /invalid recording key/)
}

t.test('DirectoryRecordingStore', async (t) => {
  const dir = tempDir(t)
  const store = new DirectoryRecordingStore(join(dir, 'recordings'))
  await roundTrip(t, store)
  t.ok(existsSync(join(dir, 'recordings', 'norg_1', 'nsess_2', '0000000001.json')), 'files under the data dir')
})

t.test('S3RecordingStore against an S3-compatible server on this machine', async (t) => {
  const dir = tempDir(t)
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'recordings', configs: [] }] })
  const { port } = await server.run()
  t.teardown(() => server.close())
  const store = new S3RecordingStore({
    bucket: 'recordings', prefix: 'nightjar/', endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  })
  t.teardown(() => store.destroy())
  await roundTrip(t, store)
  // the prefix is the store's own: another store on the bucket root does not see past it
  const root = new S3RecordingStore({ bucket: 'recordings', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } })
  t.teardown(() => root.destroy())
  t.same(await root.list('nightjar/norg_1/nsess_2'), ['nightjar/norg_1/nsess_2/0000000001.json'], 'written under the configured key prefix')
})

t.test('the retention sweep deletes recordings past the retention, blobs and row', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const store = new DirectoryRecordingStore(join(s.dataDir, 'recordings'))
  const DAY = 86_400_000
  const t0 = Date.parse('2026-01-01T00:00:00Z')
  const make = async (startedAt: number) => {
    const id = newId('nsess_')
    await insertSession(s.testDb.db, {
      id, orgId: org.orgId, agentId: org.agentId, openedBy: { principalId: org.agentId, credentialId: 'nkey_x', name: 'k' }, admission: 'direct',
      identityId: null, grantId: null, egress: 'platform', networkId: null, browserKind: 'chromium', url: null, viewport: null,
      createdAt: new Date(startedAt).toISOString(), idleTimeoutSecs: 600, maxDurationSecs: 3600,
    } as Parameters<typeof insertSession>[1])
    const row = await insertRecording(s.testDb.db, { sessionId: id, orgId: org.orgId, startedAt: new Date(startedAt).toISOString() })
    await store.put(chunkKey(row.storageKey, 1), Buffer.from('[{"type":4}]'))
    return id
  }
  const old = await make(t0 - 31 * DAY)
  const recent = await make(t0 - 29 * DAY)
  const gone = await sweepRecordings({ db: s.testDb.db, store, now: () => t0 }, 30)
  t.same(gone, [old], 'only the recording older than 30 days')
  t.equal(await getRecording(s.testDb.db, org.orgId, old), null, 'its row is gone')
  t.same(await store.list(`${org.orgId}/${old}`), [], 'its blobs are gone')
  const kept = await getRecording(s.testDb.db, org.orgId, recent)
  t.ok(kept, 'the recent one stays')
  t.same(await readTimeline(store, kept!), [{ type: 4 }], 'with its timeline')
  t.same(await sweepRecordings({ db: s.testDb.db, store, now: () => t0 + 2 * DAY }, 30), [recent], 'and goes once it is old enough')
})
