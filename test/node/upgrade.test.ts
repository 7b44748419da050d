// helm upgrade from the previous release to this one, then helm rollback, on the real node,
// with sessions live and an agent driving them the whole time (REST, MCP, and sessions
// started and ended). Every answer is timed; the errors and the longest answer of each
// window are printed beside the steady state before it. Design: docs/upgrades.md
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { PRODUCT_VERSION } from '../../contracts/version.ts'
import { bridgeWeb } from '../cluster/helpers.ts'
import type { ClusterInfo } from '../cluster/main.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { waitFor } from '../helpers/wait.ts'
import { clusterShell, deleteNamespace, freshDatabase, readmeInstall, rolledOut } from './install.ts'
import { previousRelease } from './previous-release.ts'
import { clusterUp, KUBECTL, ROOT } from './real-cluster.ts'

t.setTimeout(60 * 60_000)
const { kubeconfig, databaseUrl, bridge } = clusterUp()
// the README's names, verbatim
const release = 'nightjar'
const chartNs = 'nightjar'
const { sh, kubectlJson } = clusterShell(kubeconfig, chartNs)

/** one call the agent made: `at` is when it began, in ms since the test's agent started */
interface Answer { window: string; what: string; at: number; ms: number; ok: boolean; status: number | 'network'; detail: string }

t.test('[ISSUE-38] helm upgrade from the previous release and helm rollback to it, with sessions live and an agent driving them: no session lost, leadership handed over, and no error where this release\'s pods stop', async (t) => {
  const previous = await previousRelease((m) => t.comment(m))
  t.not(previous.version, PRODUCT_VERSION, `the previous release (${previous.version}) is another version than this one (${PRODUCT_VERSION})`)
  deleteNamespace(kubeconfig, chartNs)
  const dbUrl = await freshDatabase(databaseUrl, t)
  // The live sessions' pods are the previous release's throughout, and its egress gateway
  // sends a request on a kept-alive connection even as the origin closes it for idleness: the
  // page fails with ERR_CONNECTION_RESET (the likely cause of one such navigate failure in CI,
  // during an upgrade whose closing pods made calls wait seconds). This release sends such a
  // request again (egress-gateway.ts, tested in egress-gateway.test.ts); an origin that keeps
  // its connections for the whole test keeps that race of the old image out of what this judges.
  const web = await bridgeWeb(t, { network: { bridge } } as unknown as ClusterInfo, { keepAliveMs: 60 * 60_000 })
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-upgrade-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const valuesFile = join(dir, 'values.json')
  // values both releases' schemas accept: what a platform team keeps in git and passes to each upgrade
  writeFileSync(valuesFile, JSON.stringify({
    browserPods: {
      warmPoolSize: 1,
      hostAliases: { 'example.com': web.ip },
      networkPolicy: { denyCidrs: ['127.0.0.0/8', '169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '198.19.0.0/16'] },
    },
  }))
  t.teardown(async () => {
    await sh(`helm uninstall ${release} -n ${chartNs} --wait=false`)
    deleteNamespace(kubeconfig, chartNs)
  })
  const scrub = (text: string) => text.replaceAll(dbUrl, '<DATABASE_URL>').slice(0, 600)

  // --- the previous release, installed as its own README says, from its own tree
  const commands = readmeInstall(previous.readme, dbUrl, valuesFile)
  let bootstrapOut = ''
  for (const [i, cmd] of commands.entries()) {
    const last = i === commands.length - 1
    if (last) await rolledOut(kubeconfig, chartNs, [`${release}-api-server`, `${release}-operator`])
    const r = await sh(cmd, previous.dir)
    t.equal(r.status, 0, `${previous.version}'s README: ${cmd.split(' ').slice(0, 4).join(' ')} … ${r.status === 0 ? '' : scrub(r.stderr)}`)
    if (last) bootstrapOut = r.stdout
  }
  const helmLine = commands.find((c) => c.startsWith('helm install'))!
  const { apiKey } = JSON.parse(bootstrapOut) as { apiKey: string }
  const svc = await kubectlJson(['get', 'service', `${release}-api-server`])
  const apiUrl = `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`

  const imagesOf = async (component: string) => (await kubectlJson(['get', 'pods', '-l', `app.kubernetes.io/component=${component}`])).items
    .filter((p: any) => !p.metadata.deletionTimestamp)
    .map((p: any) => ({ name: p.metadata.name as string, uid: p.metadata.uid as string, tag: String(p.spec.containers[0].image).split(':').pop(), ready: p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') }))
  const leader = async () => {
    const leases = (await kubectlJson(['get', 'leases'])).items.filter((l: any) => l.metadata.name.includes('operator'))
    return { holder: leases[0]?.spec?.holderIdentity as string | undefined, transitions: (leases[0]?.spec?.leaseTransitions ?? 0) as number }
  }
  /** every api-server and operator pod runs `tag` and is Ready, the warm pool is `tag`'s (and Ready, when asked), and an operator of it leads */
  const settledOn = (tag: string, warmReady = false) => waitFor(async () => {
    for (const c of ['api-server', 'operator']) {
      const pods = await imagesOf(c)
      if (pods.length !== 2 || !pods.every((p: any) => p.tag === tag && p.ready)) return false
    }
    // the pool is made from this release's template; its readiness only before the agent
    // starts, whose starter then claims each warm pod about as soon as it comes up
    const warm = (await kubectlJson(['get', 'pods', '-l', 'nightjar.dev/pool=warm'])).items.filter((p: any) => !p.metadata.deletionTimestamp)
    const ready = (p: any) => p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')
    if (!warm.length || !warm.every((p: any) => String(p.spec.containers[0].image).endsWith(`:${tag}`) && (!warmReady || ready(p)))) return false
    const { holder } = await leader()
    return (await imagesOf('operator')).some((p: any) => p.name === holder)
  }, { timeoutMs: 600_000, intervalMs: 1000, what: `every pod of ${release} on ${tag} and an operator of it leading` })
  await settledOn(previous.version, true)
  t.pass(`${previous.version} installed: api-server, operator and warm pool on its images, an operator of it leading`)

  // --- the agent: two live sessions driven over REST and MCP, and sessions started and ended
  const answers: Answer[] = []
  let window = 'steady'
  let stop = false
  const agentStart = performance.now()
  const timed = async (what: string, call: () => Promise<{ ok: boolean; status: number; detail: string }>) => {
    // a call belongs to the window it began in: a start begun as a rollout settles may end in the next
    const began = window
    const started = performance.now()
    let r: { ok: boolean; status: number | 'network'; detail: string }
    try {
      r = await call()
    } catch (e) {
      r = { ok: false, status: 'network', detail: String((e as Error).cause ?? (e as Error).message).slice(0, 200) }
    }
    answers.push({ window: began, what, at: Math.round(started - agentStart), ms: performance.now() - started, ...r })
  }
  /** what an error answer says: the product's code, reason and message, else the body as sent (Fastify's own 503 has a string `error`) */
  const detailOf = (json: any, text: string) => (typeof json?.error?.code === 'string' ? `${json.error.code} ${json.error.reason ?? ''}: ${json.error.message ?? ''}` : text.slice(0, 160))
  const rest = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(apiUrl + path, { method, headers: { authorization: `Bearer ${apiKey}`, prefer: 'wait=90', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const text = await r.text()
    let json: any
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    return { status: r.status, body: json, text, detail: detailOf(json, text) }
  }
  const navigate = (id: string) => timed('navigate (REST)', async () => {
    const r = await rest('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/fill-check.html' })
    return { ok: r.status === 200 && r.body?.title === 'Fill check', status: r.status, detail: r.detail }
  })
  const perceive = (mcp: Client, id: string) => timed('perceive (MCP)', async () => {
    const r = await mcp.callTool({ name: 'perceive', arguments: { sessionId: id } })
    // the page is unchanged between calls: a perceive may answer with a diff, not refs
    return { ok: !r.isError, status: 200, detail: r.isError ? JSON.stringify(r.content).slice(0, 160) : '' }
  })
  // a failed wait ends the test: the agent's loops end with it, else they drive a deleted release until tap's timeout
  t.teardown(() => { stop = true })
  const live: { id: string; pod: string; podUid: string }[] = []
  for (let i = 0; i < 2; i++) {
    const s = await rest('POST', '/v1/sessions', {})
    t.equal(s.status, 201, `live session ${i + 1} started on ${previous.version}`)
    const bs = (await kubectlJson(['get', 'browsersessions'])).items.find((b: any) => b.metadata.annotations?.['nightjar.dev/id'] === s.body.id)
    const pod = await kubectlJson(['get', 'pod', bs.status.podName])
    live.push({ id: s.body.id, pod: pod.metadata.name, podUid: pod.metadata.uid })
  }
  const drivers = live.map(async ({ id }) => {
    const mcp = await mcpClient(t, apiUrl, apiKey)
    while (!stop) {
      await navigate(id)
      await perceive(mcp, id)
    }
  })
  const starter = (async () => {
    while (!stop) {
      let id: string | undefined
      await timed('session start (REST)', async () => {
        const r = await rest('POST', '/v1/sessions', {})
        id = r.body?.id
        // a 202 pending (a replica closing answers its waiting starts so) is followed, as a client does
        let view = r.body
        for (let i = 0; r.status === 202 && view?.status === 'pending' && i < 10; i++) view = (await rest('GET', `/v1/sessions/${id}?waitSeconds=30`)).body
        return { ok: (r.status === 201 || r.status === 202) && view?.status === 'live', status: r.status, detail: r.status === 201 || r.status === 202 ? `status ${view?.status}` : r.detail }
      })
      if (!id) continue
      await navigate(id)
      await timed('session end (REST)', async () => {
        const r = await rest('DELETE', `/v1/sessions/${id}`)
        return { ok: r.status === 200, status: r.status, detail: r.detail }
      })
    }
  })()
  const roundsIn = (w: string, what: string) => answers.filter((a) => a.window === w && a.what === what).length
  const drivenAWhile = (w: string) => waitFor(() => roundsIn(w, 'perceive (MCP)') >= 10 && roundsIn(w, 'session end (REST)') >= 2, { timeoutMs: 600_000, intervalMs: 200, what: `the agent driving a while in ${w}` })
  await drivenAWhile('steady')

  /** one release change with the agent driving: the command, then until every pod is the new one; `closingRelease` runs the pods that stop */
  const change = async (name: string, cmd: string, tag: string, closingRelease: string) => {
    const before = await leader()
    window = name
    const began = Math.round(performance.now() - agentStart)
    const r = await sh(cmd)
    t.equal(r.status, 0, `${cmd.split(' ').slice(0, 3).join(' ')} … ${r.status === 0 ? '' : scrub(r.stderr)}`)
    await rolledOut(kubeconfig, chartNs, [`${release}-api-server`, `${release}-operator`], 600_000)
    await settledOn(tag)
    t.comment(`${name}: began at +${began} ms, every pod on ${tag} at +${Math.round(performance.now() - agentStart)} ms`)
    const after = await leader()
    t.not(after.holder, before.holder, `${name}: leadership handed over (${before.holder} → ${after.holder})`)
    t.ok(after.transitions > before.transitions, `${name}: the lease counts the transition`)
    // the driving goes on a while on the new pods before the window closes
    await drivenAWhile(name)
    window = `after ${name}`
    for (const s of live) {
      const got = await rest('GET', `/v1/sessions/${s.id}`)
      t.equal(got.body?.status, 'live', `${name}: session ${s.id} is still live`)
      const pod = await kubectlJson(['get', 'pod', s.pod])
      t.equal(pod.metadata.uid, s.podUid, `${name}: its browser pod is the same one (${previous.version}'s image, untouched)`)
    }
    const errors = answers.filter((a) => a.window === name && !a.ok)
    if (closingRelease === PRODUCT_VERSION) {
      // the errors are in the message itself: a run's summary shows it, not the diff below it
      t.equal(errors.length, 0, `${name}: the agent saw no error (${answers.filter((a) => a.window === name).length} answers)${errors.length ? `: ${errors.map((a) => `${a.what} at +${a.at} ms: ${a.status} ${a.detail}`).join('; ')}` : ''}`)
      t.notOk(answers.some((a) => a.window === name && typeof a.status === 'number' && a.status >= 500), `${name}: no 5xx`)
    } else {
      // the pods that stop are the previous release's, which closed their listener at once
      // on SIGTERM (no shutdown delay yet): the only errors an upgrade from it can show
      const closing = errors.filter((a) => /ECONNREFUSED|other side closed|ECONNRESET|"Service Unavailable"/.test(a.detail))
      t.same(errors.length, closing.length, `${name}: every error the agent saw was one of ${closingRelease}'s api-server pods closing (${errors.length} of ${answers.filter((a) => a.window === name).length} answers): ${errors.map((a) => `${a.what} at +${a.at} ms: ${a.status} ${a.detail}`).join('; ')}`)
      t.ok(errors.length <= 10, `${name}: a handful of them at most`)
    }
  }
  const helmArgs = helmLine.replace(/^helm install \S+ \S+/, '')
  await change('upgrade', `helm upgrade ${release} charts/nightjar${helmArgs}`, PRODUCT_VERSION, previous.version)
  const s = await rest('POST', '/v1/sessions', {})
  const fresh = (await kubectlJson(['get', 'browsersessions'])).items.find((b: any) => b.metadata.annotations?.['nightjar.dev/id'] === s.body.id)
  const freshPod = await kubectlJson(['get', 'pod', fresh.status.podName])
  t.match(freshPod.spec.containers[0].image, `:${PRODUCT_VERSION}`, `a session started after the upgrade runs ${PRODUCT_VERSION}'s browser image`)
  await rest('DELETE', `/v1/sessions/${s.body.id}`)
  await change('rollback', `helm rollback ${release} 1 -n ${chartNs}`, previous.version, PRODUCT_VERSION)

  stop = true
  await Promise.all([...drivers, starter])
  for (const s of live) t.equal((await rest('DELETE', `/v1/sessions/${s.id}`)).status, 200, `session ${s.id} ends normally`)

  // the figures: each window beside the steady state before it, measured in this run
  const rows = ['steady', 'upgrade', 'after upgrade', 'rollback', 'after rollback'].map((w) => {
    const inWindow = answers.filter((a) => a.window === w)
    const ms = inWindow.map((a) => a.ms).sort((a, b) => a - b)
    const longest = inWindow.reduce<Answer | undefined>((m, a) => (!m || a.ms > m.ms ? a : m), undefined)
    const errors = answers.filter((a) => a.window === w && !a.ok).length
    const q = (p: number) => (ms.length ? Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!) : 0)
    return `| ${w} | ${ms.length} | ${errors} | ${q(0.5)} | ${q(0.95)} | ${Math.round(longest?.ms ?? 0)} (${longest?.what ?? '-'}) |`
  })
  t.comment(['', '| window | answers | errors | p50 ms | p95 ms | longest ms (call) |', '|---|---|---|---|---|---|', ...rows].join('\n'))
  for (const what of ['session start (REST)', 'navigate (REST)', 'perceive (MCP)']) {
    t.ok(answers.some((a) => a.window === 'upgrade' && a.what === what), `the agent's ${what} calls ran during the upgrade`)
  }
})
