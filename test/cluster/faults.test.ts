// Faults on a real control plane, with the chart installed: a browser pod's process dies,
// the api-server pod is replaced, every api-server dies mid-start, kube-apiserver restarts
// after an etcd compaction (every watch dropped, old versions gone: informers must relist
// through 410), the leading operator is killed, and the operator goes down while sessions
// are starting.
import t from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { waitFor } from '../helpers/wait.ts'
import { cluster, createTestDb, installNightjar, kubectl, kubectlJson, podDatabaseUrl, rolledOut, ROOT } from './helpers.ts'

const PAGE = 'data:text/html,' + encodeURIComponent('<title>still here</title><h1>alive</h1>')
const LEASE_SECONDS = 30
const RETRY_SECONDS = 2

t.test('faults on a real control plane', async (t) => {
  const info = cluster()
  const db = await createTestDb(t)
  const install = await installNightjar(t, {
    databaseUrl: await podDatabaseUrl(t, db.url),
    values: {
      // a leader must ride out a kube-apiserver restart (6-12 s on this machine) without
      // losing the Lease, so the renew deadline stays well above that; failover is then
      // bounded by the lease duration
      operator: { leaderElection: { leaseDurationSeconds: LEASE_SECONDS, renewDeadlineSeconds: 20, retryPeriodSeconds: RETRY_SECONDS } },
      browserPods: { warmPoolSize: 1 },
    },
  })
  const ns = install.namespace
  const boot = spawnSync(process.execPath, ['bin/nightjar.mjs', 'admin', 'bootstrap', '--org', 'acme', '--email', 'owner@acme.test', '--json'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DATABASE_URL: db.url } })
  if (boot.status !== 0) throw new Error(`bootstrap: ${boot.stderr}`)
  const owner = JSON.parse(boot.stdout) as { apiKey: string; agentId: string }
  // starts wait for their pod (Prefer: wait, RFC 7240): a pod on this control plane takes longer
  // than the 5 s in which a start otherwise answers 202 pending; other routes ignore it
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(install.apiUrl + path, { method, headers: { authorization: `Bearer ${owner.apiKey}`, prefer: 'wait=90', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const text = await r.text()
    return { status: r.status, text, body: text ? JSON.parse(text) : undefined }
  }
  const open = async (body: Record<string, unknown> = {}) => {
    let r = await api('POST', '/v1/sessions', body)
    // as a client should: a database stalled by this machine's load answers 503 with
    // Retry-After: 2, so the start is asked again after it, twice at most
    for (let retry = 0; retry < 2 && r.status === 503 && r.body?.error?.reason === 'database_unavailable'; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 2000))
      r = await api('POST', '/v1/sessions', body)
    }
    if (r.status !== 201) throw new Error(`session_start: ${r.status} ${r.text}`)
    return r.body.id as string
  }
  /** a session a subtest opens and ends even when an assertion throws first */
  const openFor = async (sub: { teardown(fn: () => unknown): void }, body: Record<string, unknown> = {}) => {
    const id = await open(body)
    sub.teardown(() => api('DELETE', `/v1/sessions/${id}`))
    return id
  }
  const drivable = async (id: string) => {
    const r = await api('POST', `/v1/sessions/${id}/navigate`, { url: PAGE })
    return r.status === 200 && r.body.title === 'still here'
  }
  const resourceOf = async (id: string) => (await kubectlJson(['-n', ns, 'get', 'browsersessions'])).items.find((s: any) => s.metadata.annotations?.['nightjar.dev/id'] === id)
  const node = async (path: string) => {
    const r = await fetch(info.node.controlUrl + path, { method: 'POST' })
    if (!r.ok) throw new Error(`test node ${path}: ${r.status} ${await r.text()}`)
    return r.json()
  }
  const hook = async (path: string) => {
    const r = await fetch(info.controlUrl + path, { method: 'POST' })
    if (!r.ok) throw new Error(`cluster ${path}: ${r.status} ${await r.text()}`)
    return r.json()
  }
  const operatorPods = async () => (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=operator'])).items
  const leader = async () => (await kubectlJson(['-n', ns, 'get', 'lease', 'nightjar-operator'])).spec.holderIdentity as string
  const operatorLog = () => readdirSync(info.node.logDir).filter((f) => f.startsWith(`${ns}_`) && f.includes('-operator-')).map((f) => readFileSync(join(info.node.logDir, f), 'utf8')).join('\n')

  /** an identity the owner may assume: a session started with it holds its lease */
  const assumable = async (name: string) => {
    const ident = await api('POST', '/v1/identities', { name })
    await api('POST', `/v1/identities/${ident.body.id}/grants`, {
      principalAgentId: owner.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(),
      allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: 'faults',
    })
    return ident
  }

  t.test("a browser pod's process killed → the session fails and its identity lease is freed", async (t) => {
    const ident = await assumable('shopper')
    const id = await openFor(t, { identity: ident.body.id })
    const busy = await api('POST', '/v1/sessions', { identity: ident.body.id })
    t.equal(busy.status, 409, 'the identity is leased while the session lives')
    const bs = await resourceOf(id)
    await node(`/pods/${ns}/${bs.status.podName}/kill?container=browser&signal=SIGKILL`)
    await waitFor(async () => (await api('GET', `/v1/sessions/${id}`)).body.status === 'failed', { what: 'the session failed', timeoutMs: 60_000, intervalMs: 250 })
    const pod = await kubectlJson(['-n', ns, 'get', 'pod', bs.status.podName]).catch(() => undefined)
    t.ok(!pod || pod.status.phase === 'Failed' || pod.metadata.deletionTimestamp, 'the pod is not restarted (restartPolicy Never)')
    const again = await openFor(t, { identity: ident.body.id })
    t.ok(again, 'the identity is free again: a new session binds it')
    const events = (await kubectlJson(['-n', ns, 'get', 'events', '--field-selector', `involvedObject.uid=${bs.metadata.uid}`])).items
    t.ok(events.some((e: any) => e.type === 'Warning' && /browser pod/.test(e.message)), 'kubectl describe says why the session failed')
    await api('DELETE', `/v1/sessions/${again}`)
  })

  t.test('the api-server pod replaced → a live session stays drivable', async (t) => {
    const id = await openFor(t)
    t.ok(await drivable(id))
    const before = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server'])).items.map((p: any) => p.metadata.name)
    await kubectl(['-n', ns, 'delete', 'pod', ...before, '--wait=false'])
    await waitFor(async () => {
      const now = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server'])).items
      return now.some((p: any) => !before.includes(p.metadata.name) && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
    }, { what: 'a new api-server pod ready', timeoutMs: 120_000, intervalMs: 500 })
    await waitFor(() => drivable(id), { what: 'the session driven through the new api-server', timeoutMs: 30_000, intervalMs: 250 })
    t.pass('the same session answers through the replacement')
    await api('DELETE', `/v1/sessions/${id}`)
  })

  t.test('every api-server killed in the middle of a start → the restarted ones fail it (Orphaned), end its browser and free its identity', async (t) => {
    const ident = await assumable('half-started')
    const operators = `${install.fullname}-operator`
    const want = (await kubectlJson(['-n', ns, 'get', 'deployment', operators])).spec.replicas as number
    // with no operator the start cannot go live: it is certainly still in flight when its process dies
    await kubectl(['-n', ns, 'scale', 'deployment', operators, '--replicas=0'])
    await waitFor(async () => (await operatorPods()).length === 0, { what: 'no operator pod left', timeoutMs: 90_000, intervalMs: 500 })
    const r = await fetch(install.apiUrl + '/v1/sessions', { method: 'POST', headers: { authorization: `Bearer ${owner.apiKey}`, prefer: 'wait=1', 'content-type': 'application/json' }, body: JSON.stringify({ identity: ident.body.id }) })
    const started = await r.json() as { id: string; status: string }
    t.equal(r.status, 202, 'the start is answered pending')
    // no graceful stop: SIGKILL, so nothing in the dying process can finish or undo the start
    const apiPods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server'])).items.map((p: any) => p.metadata.name as string)
    for (const name of apiPods) await node(`/pods/${ns}/${name}/kill?container=api-server&signal=SIGKILL`)
    await kubectl(['-n', ns, 'scale', 'deployment', operators, `--replicas=${want}`])
    await rolledOut(ns, [`${install.fullname}-api-server`, operators])
    const failed = await waitFor(async () => {
      const got = await api('GET', `/v1/sessions/${started.id}`)
      return got.body?.status === 'failed' ? got.body : undefined
    }, { what: 'the orphaned start failed', timeoutMs: 120_000, intervalMs: 500 })
    t.equal(failed.failureReason, 'Orphaned', 'the session says why: the process starting it died')
    await waitFor(async () => {
      const pods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', `nightjar.dev/session=${started.id}`])).items
      return pods.every((p: any) => p.metadata.deletionTimestamp)
    }, { what: 'no browser pod left running for it', timeoutMs: 90_000, intervalMs: 500 })
    t.ok(await openFor(t, { identity: ident.body.id }), 'its identity is free again: a new session binds it')
  })

  t.test('etcd compacted and kube-apiserver restarted (every watch dropped) → informers relist through 410 and miss no work', async (t) => {
    const live = await openFor(t)
    const toEnd = await openFor(t)
    const logBefore = operatorLog().split('410 Gone').length
    await hook('/compact-etcd')
    await hook('/restart-apiserver')
    // work that arrives after the outage must be seen, and so must the world as it is now
    t.equal((await api('DELETE', `/v1/sessions/${toEnd}`)).status, 200)
    const fresh = await openFor(t)
    t.ok(await drivable(fresh), 'a session started after the restart goes live')
    t.ok(await drivable(live), 'a session from before the restart is still drivable')
    const ended = await resourceOf(toEnd)
    await waitFor(async () => (await resourceOf(toEnd))?.status?.phase === 'Ended' || !(await resourceOf(toEnd)), { what: 'the end request handled', timeoutMs: 60_000, intervalMs: 250 })
    await waitFor(async () => !(await kubectl(['-n', ns, 'get', 'pods', '-o', 'name'])).includes(`pod/${ended.status.podName}\n`), { what: 'the ended session pod deleted', timeoutMs: 60_000, intervalMs: 250 })
    await waitFor(() => operatorLog().split('410 Gone').length > logBefore, { what: 'the operator relisting after 410', timeoutMs: 60_000, intervalMs: 250 })
    t.pass('the operator saw 410 Gone, relisted, and did the work')
    await api('DELETE', `/v1/sessions/${live}`)
    await api('DELETE', `/v1/sessions/${fresh}`)
  })

  t.test('the leading operator killed → the standby holds the Lease once the lease has run out (client-go’s bound) and sessions keep starting', async (t) => {
    const first = await leader()
    const pod = (await operatorPods()).find((p: any) => p.metadata.name === first)
    t.ok(pod, 'the leader is one of the operator pods')
    const killedAt = Date.now()
    // the leader's pod goes with it (SIGKILL, no grace, no Lease release): a container
    // restarted in place would keep its name, which is its identity, and simply take its
    // own Lease back
    await kubectl(['-n', ns, 'delete', 'pod', first, '--grace-period=0', '--force'])
    const next = await waitFor(async () => {
      const who = await leader()
      return who && who !== first ? who : undefined
    }, { what: 'a new leader', timeoutMs: (LEASE_SECONDS + 10) * 1000, intervalMs: 100 })
    const took = Date.now() - killedAt
    // client-go's rule: a candidate may take the Lease once it has seen no renewal for the
    // lease duration, timed from when *it observed* the last one (up to one retry period
    // after it happened), and it tries once per retry period — so the bound is the lease
    // plus two retry periods, and a second of API and polling slack
    const bound = (LEASE_SECONDS + 2 * RETRY_SECONDS + 1) * 1000
    t.ok(took <= bound, `the standby (${next}) took over in ${took} ms (lease ${LEASE_SECONDS} s, retry ${RETRY_SECONDS} s)`)
    const id = await openFor(t)
    t.ok(await drivable(id), 'a session starts under the new leader')
    await api('DELETE', `/v1/sessions/${id}`)
  })

  t.test('the operator restarted while sessions start → no orphan pod, no session stuck pending', async (t) => {
    const starts = Array.from({ length: 4 }, () => api('POST', '/v1/sessions', {}))
    const names = (await operatorPods()).map((p: any) => p.metadata.name)
    await kubectl(['-n', ns, 'delete', 'pod', ...names, '--wait=false'])
    const results = await Promise.all(starts)
    await rolledOut(ns, [`${install.fullname}-operator`])
    const ids = results.filter((r) => r.status === 201).map((r) => r.body.id as string)
    t.ok(results.every((r) => r.status === 201 || r.status >= 500), `every start answered live or a clear error (${results.map((r) => r.status).join(', ')})`)
    for (const r of results.filter((r) => r.status !== 201)) t.ok(r.body?.error?.code, `a failed start says why: ${r.body?.error?.code}`)
    const rows = await Promise.all(results.map(async (r) => (r.status === 201 ? (await api('GET', `/v1/sessions/${r.body.id}`)).body.status : 'refused')))
    t.notOk(rows.includes('pending'), `no session stuck pending (${rows.join(', ')})`)
    for (const id of ids) t.ok(await drivable(id), `${id} is drivable`)
    for (const id of ids) await api('DELETE', `/v1/sessions/${id}`)
    // every browser pod left is a warm-pool pod or belongs to a session that is still open
    let left: string[] = []
    const clean = await waitFor(async () => {
      const pods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=browser-pod'])).items.filter((p: any) => !p.metadata.deletionTimestamp)
      left = pods.filter((p: any) => p.metadata.labels['nightjar.dev/pool'] !== 'warm').map((p: any) => `${p.metadata.name} (${p.status.phase}, session ${p.metadata.labels['nightjar.dev/session']})`)
      return left.length === 0
    }, { what: 'only warm-pool pods left once the sessions ended', timeoutMs: 90_000, intervalMs: 500 }).catch(() => false)
    t.ok(clean, `no orphan browser pod${left.length ? `; left: ${left.join(', ')}` : ''}`)
  })
})
