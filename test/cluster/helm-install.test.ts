// `helm install` end to end on a real kube-apiserver (1.20, with etcd and the real
// controller-manager), the way a platform team meets Nightjar: the chart's Deployments run
// on the test node with their chart ServiceAccounts' tokens, an agent drives a session over
// MCP, a sealed credential is typed, and nothing of it ends up in a resource, an event or
// a log; ending the session leaves nothing behind once the garbage collector has run.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { execFileSync } from 'node:child_process'
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { strToU8, zipSync } from 'fflate'
import { mcpClient } from '../helpers/mcp.ts'
import { grantedPersona, recordingCaller } from '../helpers/persona.ts'
import { createNamespace, waitForLine } from '../helpers/netns.ts'
import { freePort } from '../helpers/server.ts'
import { waitFor } from '../helpers/wait.ts'
import { restrictedViolations } from '../operator/kube/pod-security.ts'
import { bridgeWeb, cluster, createTestDb, installNightjar, kubectl, kubectlJson, podDatabaseUrl, ROOT, tokenKubeConfig } from './helpers.ts'
import { fnv1a } from '../helpers/fnv.ts'
import { shown } from '../helpers/perceived.ts'
import { authStateSecretName } from '../../operator/kube/auth-state-secrets.ts'

const DEV_APP = String.raw`
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<title>dev app</title><h1>served from the developer machine</h1>')
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'))`

/** the token of a ServiceAccount, from the Secret the token controller made for it (1.20) */
async function serviceAccountToken(ns: string, sa: string): Promise<string> {
  const account = await kubectlJson(['-n', ns, 'get', 'serviceaccount', sa])
  const secret = await kubectlJson(['-n', ns, 'get', 'secret', account.secrets[0].name])
  return Buffer.from(secret.data.token, 'base64').toString('utf8')
}

/** the HTTP status a Kubernetes call answered with (200 when it succeeded) */
async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    await call()
    return 200
  } catch (err) {
    return (err as { code?: number }).code ?? -1
  }
}

const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-k8s'


/** `nightjar admin bootstrap` against the release's database, as its NOTES say (here without kubectl exec: the test node has none) */
function bootstrap(databaseUrl: string): { apiKey: string; agentId: string } {
  const r = spawnSync(process.execPath, ['bin/nightjar.mjs', 'admin', 'bootstrap', '--org', 'acme', '--email', 'owner@acme.test', '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: databaseUrl, NIGHTJAR_LOG_LEVEL: 'silent' },
  })
  if (r.status !== 0) throw new Error(`admin bootstrap failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

t.test('helm install on a real control plane: a session from MCP to the garbage collector', async (t) => {
  const info = cluster()
  const db = await createTestDb(t)
  const web = await bridgeWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip, 'app.example.com': web.ip }
  const install = await installNightjar(t, {
    databaseUrl: await podDatabaseUrl(t, db.url),
    values: {
      operator: { sessionRetentionSeconds: 3 },
      browserPods: {
        warmPoolSize: 1,
        hostAliases: aliases,
        // the cluster's own pod and Service ranges are part of the deny floor, as they should be
        networkPolicy: { denyCidrs: ['127.0.0.0/8', '169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '198.19.0.0/16'] },
      },
    },
  })
  const ns = install.namespace
  const owner = bootstrap(db.url)
  // starts wait for their pod (Prefer: wait, RFC 7240): a pod on this control plane takes longer
  // than the 5 s in which a start otherwise answers 202 pending; other routes ignore it
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(install.apiUrl + path, { method, headers: { authorization: `Bearer ${owner.apiKey}`, prefer: 'wait=90', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const text = await r.text()
    return { status: r.status, text, body: text ? JSON.parse(text) : undefined }
  }

  t.test('the release is up: both Deployments ran through the real ReplicaSet controller on the test node', async (t) => {
    const pods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', `app.kubernetes.io/instance=${install.release}`])).items
    const components = pods.map((p: any) => p.metadata.labels['app.kubernetes.io/component']).sort()
    t.same(components, ['api-server', 'api-server', 'operator', 'operator'], 'two api-servers (the chart’s default) and two operators (a leader and a standby)')
    for (const p of pods) {
      t.equal(p.spec.nodeName, info.node.name, `${p.metadata.name} runs on the test node`)
      t.equal(p.metadata.ownerReferences?.[0]?.kind, 'ReplicaSet', `${p.metadata.name} belongs to a ReplicaSet`)
      t.ok(p.status.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'), `${p.metadata.name} is Ready`)
    }
    const health = await fetch(`${install.apiUrl}/readyz`)
    t.equal(health.status, 200, 'the api-server Service answers /readyz')
    const lease = await kubectlJson(['-n', ns, 'get', 'lease', 'nightjar-operator'])
    t.ok(pods.some((p: any) => p.metadata.name === lease.spec.holderIdentity), 'an operator pod holds the leader Lease under its own name')
  })

  t.test('a session from MCP: BrowserSession → owned, restricted Pod with a token Secret → live → driven → a sealed fill → ended and collected', async (t) => {
    const identity = await grantedPersona(api, { agentId: owner.agentId, value: CANARY, origin: 'login.example.com', reason: 'cluster test' })
    const replies: string[] = []
    const call = recordingCaller(await mcpClient(t, install.apiUrl, owner.apiKey), replies)
    const started = (await call('session_start', { identity })).structuredContent as any
    t.equal(started.status, 'live', 'session_start answers live')
    const id = started.id as string

    const sessions = (await kubectlJson(['-n', ns, 'get', 'browsersessions'])).items
    const bs = sessions.find((s: any) => s.metadata.annotations?.['nightjar.dev/id'] === id)
    t.ok(bs, 'a BrowserSession resource carries the session id')
    t.equal(bs.status.phase, 'Live')
    t.ok(bs.status.conditions.every((c: any) => typeof c.message === 'string' && c.message.length > 0), 'every condition has a message the real server accepted')
    const pod = await kubectlJson(['-n', ns, 'get', 'pod', bs.status.podName])
    const ref = pod.metadata.ownerReferences?.[0]
    t.same([ref?.kind, ref?.name, ref?.uid, ref?.controller], ['BrowserSession', bs.metadata.name, bs.metadata.uid, true], 'the Pod is owned by its BrowserSession')
    t.same(restrictedViolations(pod.spec), [], 'the browser Pod meets Pod Security "restricted"')
    t.equal(pod.spec.automountServiceAccountToken, false, 'no service-account token in a browser')
    const secretName = pod.metadata.annotations['nightjar.dev/token-secret']
    const secret = await kubectlJson(['-n', ns, 'get', 'secret', secretName])
    t.equal(secret.metadata.ownerReferences?.[0]?.uid, bs.metadata.uid, 'the token Secret is owned by the BrowserSession too')
    t.equal(secret.immutable, true)

    const nav = (await call('navigate', { sessionId: id, url: 'http://login.example.com/fill-check.html' })).structuredContent as any
    t.equal(nav.title, 'Fill check', 'the browser pod reached the page through its egress gateway')
    const fill = (await call('credential_fill', { sessionId: id, credentialName: 'login', selector: '#pw' })).structuredContent as any
    // a fill answers with what it changed; the rest is the spec's result
    const { changes: _fillChanges, ...fillResult } = fill
    t.same(fillResult, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' })
    await call('act', { sessionId: id, verb: 'click', selector: '#submit' })
    const seen = (await call('perceive', { sessionId: id, full: true })).structuredContent as any
    t.match(shown(seen), `len=${CANARY.length} fnv=${fnv1a(CANARY)}`, 'the page received exactly the secret')
    const shot = await call('screenshot', { sessionId: id })
    t.equal(Buffer.from((shot.content as any)[0].data, 'base64').subarray(1, 4).toString(), 'PNG')

    const ended = (await call('session_end', { sessionId: id })).structuredContent as any
    t.equal(ended.status, 'ended')
    await waitFor(async () => !(await kubectl(['-n', ns, 'get', 'pods', '-o', 'name'])).includes(`pod/${bs.status.podName}\n`), { what: 'the browser pod gone', timeoutMs: 60_000, intervalMs: 250 })
    await waitFor(async () => !(await kubectl(['-n', ns, 'get', 'browsersessions', '-o', 'name'])).includes(bs.metadata.name), { what: 'the BrowserSession deleted after its retention', timeoutMs: 60_000, intervalMs: 250 })
    await waitFor(async () => !(await kubectl(['-n', ns, 'get', 'secrets', '-o', 'name'])).includes(`secret/${secretName}\n`), { what: 'the garbage collector removing the token Secret', timeoutMs: 60_000, intervalMs: 250 })
    t.pass('pod, resource and token Secret are gone')

    const describe = await kubectl(['-n', ns, 'get', 'events', '--field-selector', `involvedObject.uid=${bs.metadata.uid}`, '-o', 'json'])
    const reasons = JSON.parse(describe).items.map((e: any) => e.reason)
    t.ok(['Live', 'Ended'].every((r) => reasons.includes(r)), `the session's events tell its story (${reasons.join(', ')})`)

    // the canary: in no reply, resource, event or log
    const everything = await kubectl(['-n', ns, 'get', 'all,browsersessions,networks,events,secrets,configmaps,leases', '-o', 'json'])
    const decodedSecrets = JSON.parse(await kubectl(['-n', ns, 'get', 'secrets', '-o', 'json'])).items.flatMap((s: any) => Object.values(s.data ?? {}).map((v: any) => Buffer.from(v, 'base64').toString('latin1')))
    const logs = readdirSync(info.node.logDir).filter((f) => f.startsWith(`${ns}_`)).map((f) => readFileSync(join(info.node.logDir, f), 'utf8'))
    t.ok(logs.length >= 3, `the pods' logs are there to search (${logs.length} files)`)
    for (const [what, text] of [['MCP replies', replies.join('\n')], ['resources and events', everything], ['Secret values', decodedSecrets.join('\n')], ['container logs', logs.join('\n')]] as const) {
      t.notOk(text.includes(CANARY), `the secret is in no ${what}`)
    }
  })

  t.test('[RULE-18] warm resume with the local KMS provider: the api-server hands the opened auth-state over, and the new session’s page is signed in', async (t) => {
    const APP = 'http://app.example.com'
    const PASSWORD = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-wr'
    // the operator gets no database and no key with the local provider (the chart gives it neither)
    const operatorEnv = (await kubectlJson(['-n', ns, 'get', 'deployment', `${install.fullname}-operator`])).spec.template.spec.containers[0].env.map((e: any) => e.name)
    t.same(operatorEnv.filter((n: string) => n === 'DATABASE_URL' || n.startsWith('NIGHTJAR_KMS_')), [], 'the operator has neither DATABASE_URL nor KMS settings')
    t.equal((await api('PUT', '/v1/governance', { cloakEnabled: true, declaredAdvisorOrigins: [APP] })).status, 200)
    const ident = await api('POST', '/v1/identities', { name: 'traveller' })
    t.equal(ident.status, 201)
    // the login page derives its session cookie from the password: the canary travels in the auth-state
    t.equal((await api('POST', `/v1/identities/${ident.body.id}/credentials`, { name: 'login', value: PASSWORD, originAllowlist: ['app.example.com'] })).status, 201)
    t.equal((await api('POST', `/v1/identities/${ident.body.id}/grants`, {
      principalAgentId: owner.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(),
      allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: 'cluster warm resume',
    })).status, 201)
    const start = { identity: ident.body.id, browserKind: 'cloak', url: `${APP}/` }
    const drive = async (id: string, path: string, body: unknown) => {
      const r = await api('POST', `/v1/sessions/${id}/${path}`, body)
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.body?.error?.code ?? ''}`)
      return r.body
    }

    // capture: a cloak session signs in, and the admin captures its auth-state (sealed with the local key)
    const first = await api('POST', '/v1/sessions', start)
    t.equal(first.status, 201, `cloak session_start: ${first.body?.error?.code ?? first.status}`)
    await drive(first.body.id, 'navigate', { url: `${APP}/app-login.html` })
    await drive(first.body.id, 'act', { verb: 'type', selector: '#user', text: 'traveller' })
    await drive(first.body.id, 'fill-credential', { credentialName: 'login', selector: '#pw' })
    await drive(first.body.id, 'act', { verb: 'click', selector: '#submit' })
    await drive(first.body.id, 'wait-for', { text: 'signed in as' })
    const captured = await api('POST', `/v1/sessions/${first.body.id}/authstate`, {})
    t.equal(captured.status, 201, 'auth-state captured')
    t.equal((await api('DELETE', `/v1/sessions/${first.body.id}`)).status, 200)

    // resume: the operator launches the pod with the state it read from the api-server's Secret
    const resumed = await api('POST', '/v1/sessions', { ...start, warmResume: true })
    t.equal(resumed.status, 201, `warm-resume session_start: ${resumed.body?.error?.code ?? resumed.status}`)
    t.equal(resumed.body.status, 'live')
    const id = resumed.body.id as string
    const secrets = await kubectl(['-n', ns, 'get', 'secrets', '-o', 'name'])
    t.notOk(secrets.includes(`secret/${authStateSecretName(id)}\n`), 'once the pod runtime held it, the operator deleted the auth-state Secret')
    await drive(id, 'navigate', { url: `${APP}/app-home.html` })
    const text = shown((await drive(id, 'perceive', {})) as any)
    t.match(text, /signed in as traveller/, 'the new session’s page is signed in')
    t.ok(text.includes(`cookie len=${PASSWORD.length} fnv=${fnv1a(PASSWORD)}`), 'with exactly the captured session cookie')
    const bs = (await kubectlJson(['-n', ns, 'get', 'browsersessions'])).items.find((x: any) => x.metadata.annotations?.['nightjar.dev/id'] === id)
    t.equal(bs?.status?.phase, 'Live')
    t.equal((await api('DELETE', `/v1/sessions/${id}`)).status, 200)

    // the auth-state is in no resource, status, event, Secret or log
    const everything = await kubectl(['-n', ns, 'get', 'all,browsersessions,networks,events,secrets,configmaps,leases', '-o', 'json'])
    const decodedSecrets = JSON.parse(await kubectl(['-n', ns, 'get', 'secrets', '-o', 'json'])).items.flatMap((x: any) => Object.values(x.data ?? {}).map((v: any) => Buffer.from(v, 'base64').toString('latin1')))
    const logs = readdirSync(info.node.logDir).filter((f) => f.startsWith(`${ns}_`)).map((f) => readFileSync(join(info.node.logDir, f), 'utf8'))
    for (const [what, text] of [['resources, statuses and events', everything], ['Secret values', decodedSecrets.join('\n')], ['container logs', logs.join('\n')]] as const) {
      t.notOk(text.includes(PASSWORD), `the auth-state is in no ${what}`)
    }
  })

  t.test('[ISSUE-51] extensions on Kubernetes: a session naming one runs in a pod of its own from the cloak image, whose full Chromium runs the extension', async (t) => {
    const marker = Buffer.from(zipSync({
      'manifest.json': strToU8(JSON.stringify({ manifest_version: 3, name: 'Marker', version: '1.0', content_scripts: [{ matches: ['<all_urls>'], js: ['content.js'] }] })),
      'content.js': strToU8("const p = document.createElement('p'); p.textContent = 'Added by an extension'; document.body.appendChild(p)"),
    })).toString('base64')
    const uploaded = await api('POST', '/v1/extensions', { zipBase64: marker })
    t.equal(uploaded.status, 201, `upload: ${uploaded.body?.error?.code ?? uploaded.status}`)
    const started = await api('POST', '/v1/sessions', { extensions: [uploaded.body.id] })
    t.equal(started.status, 201, `start: ${started.body?.error?.code ?? started.status}`)
    const id = started.body.id as string
    t.equal(started.body.status, 'live')
    const bs = (await kubectlJson(['-n', ns, 'get', 'browsersessions'])).items.find((x: any) => x.metadata.annotations?.['nightjar.dev/id'] === id)
    t.equal(bs?.spec?.extensions, true, 'its BrowserSession says it loads extensions')
    const pod = await kubectlJson(['-n', ns, 'get', 'pod', bs.status.podName])
    t.match(pod.spec.containers[0].image, /\/nightjar-browser-pod-cloak:/, 'its pod runs the cloak image (full Chromium), not a warm headless-shell pod')
    const nav = await api('POST', `/v1/sessions/${id}/navigate`, { url: 'http://app.example.com/app-home.html' })
    t.equal(nav.status, 200, `navigate: ${nav.body?.error?.code ?? nav.status}`)
    const seen = await waitFor(async () => {
      const p = await api('POST', `/v1/sessions/${id}/perceive`, {})
      return p.status === 200 && shown(p.body).includes('Added by an extension') ? p.body : undefined
    }, { what: 'the extension’s paragraph on the page' })
    t.ok(seen, 'the content script changed the page, seen through perceive')
    t.equal((await api('DELETE', `/v1/sessions/${id}`)).status, 200)
  })

  t.test('each component talks to Kubernetes as its own ServiceAccount, and RBAC refuses what its Role does not grant', async (t) => {
    const pods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', `app.kubernetes.io/instance=${install.release}`])).items
    const saOf = (component: string) => pods.find((p: any) => p.metadata.labels['app.kubernetes.io/component'] === component).spec.serviceAccountName
    t.equal(saOf('api-server'), `${install.fullname}-api-server`)
    t.equal(saOf('operator'), `${install.fullname}-operator`)
    const group = 'nightjar.dev', version = 'v1'
    const asApi = tokenKubeConfig(await serviceAccountToken(ns, saOf('api-server')))
    const asOperator = tokenKubeConfig(await serviceAccountToken(ns, saOf('operator')))
    t.equal(await statusOf(() => asApi.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group, version, namespace: ns, plural: 'browsersessions' })), 200, 'the api-server lists sessions')
    t.equal(await statusOf(() => asApi.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: ns })), 403, 'the api-server may not list Secrets')
    t.equal(await statusOf(() => asApi.makeApiClient(CoreV1Api).deleteCollectionNamespacedPod({ namespace: ns })), 403, 'the api-server may not delete pods')
    t.equal(await statusOf(() => asOperator.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns })), 200, 'the operator lists pods')
    t.equal(await statusOf(() => asOperator.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: ns })), 403, 'the operator may not list Secrets')
    t.equal(await statusOf(() => asOperator.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ group, version, namespace: ns, plural: 'browsersessions', body: { apiVersion: `${group}/${version}`, kind: 'BrowserSession', metadata: { name: 'forged' }, spec: {} } })), 403, 'the operator may not create sessions')
    t.equal(await statusOf(() => asOperator.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'kube-system' })), 403, 'nothing outside its namespaces')
  })

  t.test('networks: POST /v1/networks makes the Network resource, and a daemon joined to it serves a local-egress session through the cluster path', async (t) => {
    const created = await api('POST', '/v1/networks', { name: 'dev' })
    t.equal(created.status, 201, created.text)
    const netId = created.body.network.id as string
    const resource = (await kubectlJson(['-n', ns, 'get', 'networks'])).items.find((n: any) => n.metadata.annotations?.['nightjar.dev/id'] === netId)
    t.ok(resource, 'a Network resource carries the network id')
    t.equal(resource?.spec.name, 'dev')

    // the developer's machine: a network namespace with a local app on its own loopback,
    // reaching the cluster only through the api-server's Service address
    const dev = await createNamespace(t)
    execFileSync('ip', ['-n', dev.ns, 'route', 'add', 'default', 'via', dev.hostIp])
    const appPort = await freePort()
    await waitForLine(dev.spawn(process.execPath, ['-e', DEV_APP], { PORT: String(appPort) }), 'ready', 15_000)
    const dir = mkdtempSync(join(tmpdir(), 'nj-daemon-'))
    writeFileSync(join(dir, 'token'), created.body.token.secret, { mode: 0o600 })
    const daemon = dev.spawn(process.execPath, ['bin/nightjar.mjs', 'daemon', '--network', 'dev', '--control-url', install.apiUrl.replace(/^http/, 'ws'), '--network-token-file', join(dir, 'token'), '--daemon-host', 'devbox'], { NODE_PATH: ROOT })
    let out = ''
    daemon.stdout!.on('data', (d) => (out += d))
    daemon.stderr!.on('data', (d) => (out += d))
    await waitFor(async () => (await api('GET', `/v1/networks/${netId}/daemons`)).body.some((d: any) => d.reachable), { what: 'the daemon joined through the Service', timeoutMs: 30_000 })
    t.equal((await api('PATCH', `/v1/networks/${netId}`, { declaredHosts: [`localhost:${appPort}`] })).status, 200)
    // the operator is another process: it shows the daemon because the api-server publishes
    // each Network's counts on it (an annotation the operator's reconciler reads into status)
    const status = await waitFor(async () => {
      const n = (await kubectlJson(['-n', ns, 'get', 'networks'])).items.find((x: any) => x.metadata.annotations?.['nightjar.dev/id'] === netId)
      return n?.status?.onlineDaemonCount === 1 ? n.status : undefined
    }, { what: 'the Network status to count the daemon', timeoutMs: 15_000 })
    const listed = (await api('GET', '/v1/networks')).body.find((n: any) => n.id === netId)
    t.same([status.daemonCount, status.onlineDaemonCount], [listed.daemonCount, listed.onlineDaemonCount], 'the Network status and GET /v1/networks agree')
    t.equal(status.conditions?.find((c: any) => c.type === 'Ready')?.status, 'True', 'the Network is Ready with its daemon online')

    const opened = await api('POST', '/v1/sessions', { egress: 'local', network: 'dev' })
    t.equal(opened.status, 201, opened.text)

    // what a platform team types: short names, the category, the printer columns
    const bsTable = (await kubectl(['-n', ns, 'get', 'bs', '-o', 'wide'])).split('\n')
    t.match(bsTable[0], /^NAME\s+PHASE\s+EGRESS\s+IDENTITY\s+ENDPOINT\s+POD\s+SANDBOX\s+AGE/, 'kubectl get bs -o wide shows the printer columns')
    t.ok(bsTable.some((l) => /\sLive\s+local\s/.test(l)), 'the local-egress session reads Live')
    t.ok(bsTable.some((l) => /\sLive\s+local\s.*\schromium\s/.test(l)), '[ISSUE-35] and its sandbox column reads chromium')
    const netTable = (await kubectl(['-n', ns, 'get', 'nnet'])).split('\n')
    t.match(netTable[0], /^NAME\s+NAME\s+READY\s+DAEMONS\s+ONLINE\s+AGE/)
    t.ok(netTable.some((l) => /\sdev\s/.test(l)), 'the network is listed by its name')
    const all = await kubectl(['-n', ns, 'get', 'nightjar', '-o', 'name'])
    t.match(all, /browsersession\.nightjar\.dev\//)
    t.match(all, /network\.nightjar\.dev\//, 'kubectl get nightjar lists both kinds')
    const nav = await api('POST', `/v1/sessions/${opened.body.id}/navigate`, { url: `http://localhost:${appPort}/` })
    t.equal(nav.status, 200, nav.text)
    t.equal(nav.body.title, 'dev app', 'browser pod → egress relay Service → api-server → daemon → the local app')
    const denied = await api('POST', `/v1/sessions/${opened.body.id}/navigate`, { url: 'http://example.com/index.html' })
    t.equal(denied.body.error.code, 'E_REACHABILITY_DENIED', 'local egress sends only declared hosts, through the daemon')
    t.equal((await api('DELETE', `/v1/sessions/${opened.body.id}`)).status, 200)
    t.notOk(out.includes(created.body.token.secret), 'the daemon never printed its token')
  })
})
