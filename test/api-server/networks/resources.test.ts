// Network resources stay in step with the networks table: a write to the cluster store
// that fails is retried, one that keeps failing is logged at error and repaired, and the
// start-up reconcile repairs what an earlier process left behind.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../../../api-server/config.ts'
import { build } from '../../../api-server/app.ts'
import { bootstrapOrg } from '../../../api-server/auth/orgs.ts'
import { createEmbeddedResources } from '../../../operator/embedded/index.ts'
import { ResourceError } from '../../../ports/errors.ts'
import type { ResourceClient } from '../../../ports/ports.ts'
import type { Network } from '../../../crds/types.ts'
import type { SessionPlane } from '../../../api-server/sessions/plane.ts'
import type { PlanePorts } from '../../../api-server/sessions/runtime.ts'
import { createTestDb, type TestDb } from '../../helpers/db.ts'
import { freePort } from '../../helpers/server.ts'
import { waitFor } from '../../helpers/wait.ts'

type Verb = 'create' | 'patch' | 'delete'

/** The cluster store's Network client with injected failures: the next N writes of a verb fail (503). */
function faulty(inner: ResourceClient<Network>) {
  const failNext: Record<Verb, number> = { create: 0, patch: 0, delete: 0 }
  const failed: Record<Verb, number> = { create: 0, patch: 0, delete: 0 }
  const fault = (verb: Verb) => {
    if (failNext[verb] <= 0) return
    failNext[verb]--
    failed[verb]++
    throw new ResourceError(503, 'ServiceUnavailable', `injected: ${verb} failed`)
  }
  const client: ResourceClient<Network> = {
    kind: inner.kind,
    get: (name) => inner.get(name),
    list: (opts) => inner.list(opts),
    watch: (from, handler, opts) => inner.watch(from, handler, opts),
    patchStatus: (name, status, opts) => inner.patchStatus(name, status, opts),
    create: async (obj) => { fault('create'); return inner.create(obj) },
    patch: async (name, patch, opts) => { fault('patch'); return inner.patch(name, patch, opts) },
    delete: async (name, opts) => { fault('delete'); return inner.delete(name, opts) },
  }
  return { client, failNext, failed }
}

async function server(t: Tap, testDb: TestDb, networks: ResourceClient<Network>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'nightjar-netres-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig({ NIGHTJAR_HOST: '127.0.0.1', NIGHTJAR_PORT: String(await freePort()), NIGHTJAR_DATA_DIR: dataDir, NIGHTJAR_LOG_LEVEL: 'info' })
  let logText = ''
  const logStream = new PassThrough()
  logStream.on('data', (d) => { logText += d })
  const sessions = createEmbeddedResources().sessions
  let ports: PlanePorts | undefined
  let stopped = false
  const plane = async (p: PlanePorts): Promise<SessionPlane> => {
    ports = p
    return { sessions, networks, pods: { lookup: async () => undefined }, stop: async () => { stopped = true } }
  }
  const { app } = await build({ config, db: testDb.db, cookieKey: randomBytes(32), logStream, plane })
  t.teardown(() => app.close())
  await app.ready()
  const org = await bootstrapOrg(testDb.db, { org: `org-${randomBytes(3).toString('hex')}`, email: 'owner@netres.test', password: 'correct horse battery' })
  const req = async (method: string, url: string, payload?: unknown) => {
    const r = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${org.apiKey}` }, ...(payload === undefined ? {} : { payload: payload as object }) })
    return { status: r.statusCode, body: r.body ? r.json() : undefined }
  }
  return { app, req, logs: () => logText, ports: () => ports!, stopped: () => stopped }
}
type Tap = { teardown(fn: () => unknown): void }

const row = async (db: TestDb, id: string) => (await db.db.query('select org_id, name, declared_hosts from networks where id = $1', [id])).rows[0]

t.test('a Network resource write that fails once is retried: the cluster store ends consistent with the database', async (t) => {
  const testDb = await createTestDb(t)
  const store = createEmbeddedResources().networks
  const f = faulty(store)
  const s = await server(t, testDb, f.client)

  f.failNext.create = 1
  const created = await s.req('POST', '/v1/networks', { name: 'dev' })
  t.equal(created.status, 201)
  const id = created.body.network.id as string
  t.equal(f.failed.create, 1, 'the first create failed')
  const r = await row(testDb, id)
  t.same((await store.get(id))?.spec, { orgId: r.org_id, name: 'dev', declaredHosts: [] }, 'the resource exists, as the row says')

  f.failNext.patch = 1
  const patched = await s.req('PATCH', `/v1/networks/${id}`, { declaredHosts: ['localhost:3000', 'db.internal:5432'] })
  t.equal(patched.status, 200)
  t.equal(f.failed.patch, 1, 'the first patch failed')
  t.same((await store.get(id))?.spec.declaredHosts, (await row(testDb, id)).declared_hosts, 'the declared hosts reached the resource')
  t.same((await store.get(id))?.spec.declaredHosts, ['localhost:3000', 'db.internal:5432'])

  f.failNext.delete = 1
  t.equal((await s.req('DELETE', `/v1/networks/${id}`)).status, 204)
  t.equal(f.failed.delete, 1, 'the first delete failed')
  t.equal(await store.get(id), undefined, 'the resource is gone with the row')
  t.notMatch(s.logs(), /"level":50/, 'nothing was logged at error: the retries did it')
})

t.test('a write that keeps failing is logged at error and repaired by a later reconcile', async (t) => {
  const testDb = await createTestDb(t)
  const store = createEmbeddedResources().networks
  const f = faulty(store)
  const s = await server(t, testDb, f.client)

  f.failNext.create = 4 // every attempt of the request's own sync
  const created = await s.req('POST', '/v1/networks', { name: 'flaky' })
  t.equal(created.status, 201, 'the database is the source of truth: the network exists')
  const id = created.body.network.id as string
  t.equal(f.failed.create, 4)
  t.equal(await store.get(id), undefined, 'not in the cluster store yet')
  t.match(s.logs(), /"level":50[^\n]*Network resource write failed after retries/, 'logged at error')
  const res = await waitFor(() => store.get(id), { what: 'the repair reconcile', timeoutMs: 20_000, intervalMs: 100 })
  t.same(res.spec, { orgId: (await row(testDb, id)).org_id, name: 'flaky', declaredHosts: [] }, 'repaired to match the row')
})

t.test('the start-up reconcile creates missing resources, fixes stale ones and deletes orphans', async (t) => {
  const testDb = await createTestDb(t)
  const store = createEmbeddedResources().networks
  // what an earlier process left: a row whose resource write was lost, a stale resource, an orphan
  const org = await bootstrapOrg(testDb.db, { org: 'earlier', email: 'owner@earlier.test', password: 'correct horse battery' })
  await testDb.db.query(`insert into networks (id, org_id, name, slug, declared_hosts) values ('nnet_Lost1', $1, 'lost', 'lost', '{}'), ('nnet_Stale1', $1, 'stale', 'stale', '{localhost:8080}')`, [org.orgId])
  await store.create({ metadata: { name: 'nnet_Stale1', labels: { 'nightjar.dev/org': org.orgId } }, spec: { orgId: org.orgId, name: 'stale', declaredHosts: [] } } as unknown as Network)
  await store.create({ metadata: { name: 'nnet_Ghost1', labels: { 'nightjar.dev/org': org.orgId } }, spec: { orgId: org.orgId, name: 'ghost', declaredHosts: [] } } as unknown as Network)
  await store.create({ metadata: { name: 'not-ours' }, spec: { orgId: 'x', name: 'x', declaredHosts: [] } } as unknown as Network)

  const s = await server(t, testDb, faulty(store).client)
  t.same((await store.get('nnet_Lost1'))?.spec, { orgId: org.orgId, name: 'lost', declaredHosts: [] }, 'the missing resource is created')
  t.same((await store.get('nnet_Stale1'))?.spec.declaredHosts, ['localhost:8080'], 'the stale one is patched')
  t.equal(await store.get('nnet_Ghost1'), undefined, 'the orphan is deleted')
  t.ok(await store.get('not-ours'), 'a resource this server did not make is left alone')

  // the plane got its daemon counts at start, whole: counts come from the rows and the broker
  t.same(await s.ports().daemonCounts.counts('nnet_Lost1'), { daemonCount: 0, onlineDaemonCount: 0 })
  await s.app.close()
  t.ok(s.stopped(), 'the app stops the plane it started')
})
