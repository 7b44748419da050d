// The product's images on a real node (`npm run cluster -- up`: a real kubelet on
// containerd + runc, kube-proxy, the DNS stand-in, a Postgres on the bridge): the node
// phase of `npm test`; alone, as root: node scripts/test.mjs test/node/real-node.test.ts
// It brings the cluster up itself (a no-op when it is up) and leaves it up; `npm run
// cluster -- down` removes it. Pods run in a namespace of their own, deleted at the end.
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test as TapTest } from 'tap'
import { bridgeWeb } from '../cluster/helpers.ts'
import type { ClusterInfo } from '../cluster/main.ts'
import { fnv1a } from '../helpers/fnv.ts'
import { shown } from '../helpers/perceived.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { grantedPersona, recordingCaller } from '../helpers/persona.ts'
import { createNamespace, waitForLine } from '../helpers/netns.ts'
import { freePort } from '../helpers/server.ts'
import { waitFor } from '../helpers/wait.ts'
import { clusterUp, KUBECTL, kubectlOn, NODE_NAME, ROOT } from './real-cluster.ts'
import { dumpAllTables } from '../helpers/db.ts'
import { PRODUCT_VERSION as TAG } from '../../contracts/version.ts'
import { deleteNamespace, freshDatabase, helmEnv, readmeInstall, rolledOut } from './install.ts'
import { browserPodManifest, tokenSecretManifest } from '../../operator/kube/pod-spec.ts'
import { encoderArgs } from '../../browser-pod/video.ts'
import { SECCOMP_ROOT } from '../../devcluster/state.ts'
import { INSIDE_PROBE, podProcesses, processFacts, readAs, seccompFiltersOf, type ChromiumProcess, type InsideProcess } from '../helpers/sandbox-probe.ts'

// the first `up` on a machine builds kubelet, kube-proxy, kube-scheduler and the images
t.setTimeout(60 * 60_000)
const { kubeconfig, databaseUrl, bridge, nodes, podLogDirs } = clusterUp()
const ns = `node-test-${randomBytes(3).toString('hex')}`

const kubectl = kubectlOn(kubeconfig)

/** a Pod as the operator makes browser pods: restricted, read-only root, uid 10001 */
function restrictedPod(name: string, image: string, command: string[], labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels },
    spec: {
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{
        name: 'main', image, imagePullPolicy: 'Never', command,
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
      }],
    },
  }
}

const podReady = (name: string) => () => kubectl(['-n', ns, 'get', 'pod', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).trim() === 'True'

kubectl(['create', 'namespace', ns])
t.teardown(() => {
  spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false'], { stdio: 'ignore' })
})

t.test('the node is Ready and holds the four images, with their sizes as the kubelet reports them', async (t) => {
  // the images' size bounds: each image holds what its program imports and nothing more
  // (the operator's grew by OpenTelemetry's trace SDK and exporters, about 25 MB); the
  // headless browser image is Chromium's headless shell (the 600 MB targeted), the cloak
  // one adds full Chromium, Xvfb and Mesa
  const bound: Record<string, number> = { 'api-server': 350, operator: 280, 'browser-pod': 600, 'browser-pod-cloak': 1250 }
  type Image = { names: string[] | null; sizeBytes: number }
  const find = (images: Image[], name: string) => images.find((i) => (i.names ?? []).some((n) => n.endsWith(`/nightjar-${name}:${TAG}`)))
  // the kubelet lists its images from a cache it refreshes every 30 s: an image imported into
  // a running node (`up` again) shows up there within a minute
  const node = await waitFor(() => {
    const n = JSON.parse(kubectl(['get', 'node', NODE_NAME, '-o', 'json']))
    return Object.keys(bound).every((name) => find(n.status.images ?? [], name)) ? n : undefined
  }, { timeoutMs: 90_000, intervalMs: 1000, what: 'the node listing the four images' })
  const ready = node.status.conditions.find((c: { type: string }) => c.type === 'Ready')
  t.equal(ready?.status, 'True', 'node Ready')
  for (const name of Object.keys(bound)) {
    const mb = Math.round((find(node.status.images, name)?.sizeBytes ?? Infinity) / 1e6)
    t.ok(mb <= bound[name]!, `nightjar-${name}:${TAG}: ${mb} MB as the node reports it (≤ ${bound[name]} MB)`)
  }
})

t.test('a cloak browser pod runs the cloak image: full Chromium, headful on its own Xvfb display, as uid 10001', async (t) => {
  // the headless image has neither; the operator picks the image by the session's browserKind
  const name = 'cloak'
  // the pod runs under the chart's seccomp profile, which the chart's installer writes and
  // `down` removes: written here as that installer does, so this test needs no install before it
  mkdirSync(join(SECCOMP_ROOT, 'nightjar'), { recursive: true })
  copyFileSync(join(ROOT, 'charts/nightjar/files/chromium-sandbox.json'), join(SECCOMP_ROOT, 'nightjar/chromium-sandbox.json'))
  kubectl(['apply', '-f', '-'], JSON.stringify(tokenSecretManifest({ name: `${name}-token`, namespace: ns, podName: name, token: randomBytes(24).toString('base64url') })))
  const images = { image: `localhost/nightjar-browser-pod:${TAG}`, cloakImage: `localhost/nightjar-browser-pod-cloak:${TAG}`, imagePullPolicy: 'Never' as const }
  kubectl(['apply', '-f', '-'], JSON.stringify(browserPodManifest({ name, namespace: ns, browserKind: 'cloak', tokenSecretName: `${name}-token` }, images)))
  await waitFor(podReady(name), { timeoutMs: 180_000, intervalMs: 500, what: 'the cloak pod Ready (its browser launched)' })
  const pod = JSON.parse(kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json']))
  t.match(pod.status.containerStatuses[0].image, /nightjar-browser-pod-cloak:/, 'from the cloak image')
  const procs = podProcesses(pod.metadata.uid).map((pid) => {
    try {
      return { uid: /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1], cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') }
    } catch {
      return undefined // gone meanwhile
    }
  }).filter((p): p is { uid: string | undefined; cmd: string[] } => p !== undefined && p.cmd[0] !== '/pause') // the pod's sandbox holder runs as its own user
  const xvfb = procs.find((p) => p.cmd[0] === 'Xvfb')
  const browser = procs.find((p) => p.cmd[0] === '/usr/lib/chromium/chromium' && !p.cmd.some((a) => a.startsWith('--type=')))
  t.ok(xvfb, 'Xvfb runs in the pod')
  t.ok(browser, 'full Chromium\'s browser process runs in the pod')
  t.notOk(browser?.cmd.includes('--headless'), 'headful, not headless')
  t.ok(browser?.cmd.includes('--ozone-platform=x11'), 'drawing on the X display')
  t.same([...new Set(procs.map((p) => p.uid))], ['10001'], 'every process of the pod runs as uid 10001')
  kubectl(['-n', ns, 'delete', 'pod', name, '--wait=false'])
})

t.test('a restricted container runs as uid 10001 with seccomp, no capabilities and a read-only root, read from inside it', async (t) => {
  // the api-server's image: it holds pg, which the Postgres check below uses
  const pod = restrictedPod('restricted', `localhost/nightjar-api-server:${TAG}`, ['sleep', '3600'])
  kubectl(['apply', '-f', '-'], JSON.stringify(pod))
  await waitFor(podReady('restricted'), { timeoutMs: 120_000, intervalMs: 500, what: 'the restricted pod Ready' })
  const status = kubectl(['-n', ns, 'exec', 'restricted', '--', 'cat', '/proc/self/status'])
  t.match(status, /^Uid:\s+10001\s/m, 'non-root uid')
  t.match(status, /^Seccomp:\s+2$/m, 'seccomp filtering')
  t.match(status, /^CapEff:\s+0+$/m, 'no effective capabilities')
  const write = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', 'restricted', '--', 'touch', '/app/x'], { encoding: 'utf8' })
  t.not(write.status, 0, 'a write to the root filesystem fails')
  t.match(write.stderr, /Read-only file system/, 'because it is read-only')
  const logs = kubectl(['-n', ns, 'logs', 'restricted'])
  t.equal(logs, '', 'kubectl logs answers through the kubelet')
})

t.test('a Service name resolves through the DNS stand-in and its ClusterIP reaches the Pod through kube-proxy', async (t) => {
  const server = restrictedPod('echo', `localhost/nightjar-operator:${TAG}`, ['node', '-e', "require('http').createServer((q,s)=>s.end('echo from '+require('os').hostname())).listen(8080)"], { app: 'echo' })
  kubectl(['apply', '-f', '-'], JSON.stringify(server))
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: ns }, spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 8080 }] } }))
  await waitFor(podReady('echo'), { timeoutMs: 120_000, intervalMs: 500, what: 'the echo pod Ready' })
  await waitFor(podReady('restricted'), { timeoutMs: 120_000, intervalMs: 500, what: 'the client pod Ready' })
  const url = `http://echo.${ns}.svc.cluster.local/`
  const body = await waitFor(() => {
    const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', 'restricted', '--', 'node', '-e', `fetch('${url}').then(r=>r.text()).then(t=>process.stdout.write(t))`], { encoding: 'utf8' })
    return r.status === 0 ? r.stdout : undefined
  }, { timeoutMs: 30_000, intervalMs: 500, what: 'the Service answering by name' })
  t.equal(body, 'echo from echo', 'the answer came from the echo Pod')
})

t.test('a Pod reaches the cluster\'s Postgres with the DATABASE_URL `up` printed', async (t) => {
  const script = `const {Client}=require('/app/node_modules/pg');const c=new Client({connectionString:process.env.DATABASE_URL});c.connect().then(()=>c.query('select 41+1 as n')).then(r=>{process.stdout.write(String(r.rows[0].n));return c.end()}).catch(e=>{process.stderr.write(e.message);process.exit(1)})`
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', ns, 'exec', 'restricted', '--', 'env', `DATABASE_URL=${databaseUrl}`, 'node', '-e', script], { encoding: 'utf8' })
  t.equal(r.status, 0, `the query ran ${r.status === 0 ? '' : r.stderr.replaceAll(databaseUrl, '<DATABASE_URL>').slice(0, 300)}`)
  t.equal(r.stdout, '42', 'and answered')
})


// ---------------------------------------------------------------------------------------
// The README's "Install on Kubernetes", run as written, then sessions in real containers

const DEV_APP = String.raw`
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<title>dev app</title><h1>served from the developer machine</h1>')
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'))`

const CANARY = 'Cnry-' + randomBytes(6).toString('hex') + '-node'

t.test('the README install on the real node: Deployments Ready through the kubelet\'s probes, sessions in real containers', async (t) => {
  const release = 'nightjar' // the README's names, verbatim
  const chartNs = 'nightjar'
  const run = (cmd: string) => spawnSync('bash', ['-c', cmd], { encoding: 'utf8', env: { ...helmEnv, KUBECONFIG: kubeconfig, PATH: `${ROOT}.tools:${process.env.PATH}` }, timeout: 300_000, cwd: ROOT })
  // a namespace left by a run that died is removed first (what a second install would meet)
  deleteNamespace(kubeconfig, chartNs)
  const dbUrl = await freshDatabase(databaseUrl, t)
  const web = await bridgeWeb(t, { network: { bridge } } as unknown as ClusterInfo)
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-node-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const valuesFile = join(dir, 'values.json')
  writeFileSync(valuesFile, JSON.stringify({
    operator: { sessionRetentionSeconds: 3 },
    browserPods: {
      warmPoolSize: 1,
      hostAliases: { 'login.example.com': web.ip, 'example.com': web.ip },
      // small enough that the memory test's page outgrows it in a second or two
      resources: { limits: { memory: '1Gi' } },
      shmSize: '64Mi',
      // the cluster's own ranges stay in the deny floor; the test's web (198.18.255.x) is "public"
      networkPolicy: { denyCidrs: ['127.0.0.0/8', '169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '198.19.0.0/16'] },
    },
  }))
  t.teardown(() => {
    run(`helm uninstall ${release} -n ${chartNs} --wait=false`)
    deleteNamespace(kubeconfig, chartNs)
  })

  const commands = readmeInstall(`${ROOT}README.md`, dbUrl, valuesFile)
  let bootstrapOut = ''
  for (const [i, cmd] of commands.entries()) {
    const last = i === commands.length - 1
    if (last) {
      // the bootstrap execs into the api-server: it needs a Ready pod first
      await rolledOut(kubeconfig, chartNs, [`${release}-api-server`, `${release}-operator`])
    }
    const r = run(cmd)
    // a command line may hold the database password: name the command by its first words only
    t.equal(r.status, 0, `README: ${cmd.split(' ').slice(0, 4).join(' ')} … ${r.status === 0 ? '' : r.stderr.replaceAll(dbUrl, '<DATABASE_URL>').slice(0, 500)}`)
    if (last) bootstrapOut = r.stdout
  }
  const owner = JSON.parse(bootstrapOut) as { apiKey: string; agentId: string }
  t.ok(owner.apiKey, 'kubectl exec … admin bootstrap printed the owner\'s API key')

  const pods = JSON.parse(kubectl(['-n', chartNs, 'get', 'pods', '-l', 'app.kubernetes.io/component in (api-server,operator)', '-o', 'json'])).items
  t.equal(pods.length, 4, 'two api-server and two operator pods (the chart\'s defaults)')
  for (const p of pods) {
    t.ok(nodes.includes(p.spec.nodeName), `${p.metadata.name} runs on a real node`)
    t.ok(p.status.containerStatuses.every((c: any) => c.ready && /^localhost\/nightjar-/.test(c.image)), `${p.metadata.name}: its containers run the built images and are Ready`)
  }
  const svc = JSON.parse(kubectl(['-n', chartNs, 'get', 'service', `${release}-api-server`, '-o', 'json']))
  const apiUrl = `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`
  t.equal((await fetch(`${apiUrl}/readyz`)).status, 200, 'the api-server answers /readyz at its ClusterIP, through kube-proxy')

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(apiUrl + path, { method, headers: { authorization: `Bearer ${owner.apiKey}`, prefer: 'wait=90', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const text = await r.text()
    return { status: r.status, text, body: text ? JSON.parse(text) : undefined }
  }
  const replies: string[] = []
  const logsSeen: string[] = []
  const browserPodOf = (sessionId: string): string => {
    const list = JSON.parse(kubectl(['-n', chartNs, 'get', 'browsersessions', '-o', 'json'])).items
    const bs = list.find((s: any) => s.metadata.annotations?.['nightjar.dev/id'] === sessionId)
    if (!bs?.status?.podName) throw new Error(`no pod for session ${sessionId}`)
    return bs.status.podName
  }

  /**
   * Session video's encoder in the image: its own ffmpeg (docker/browser-pod.Dockerfile builds
   * it with only what browser-pod/video.ts asks for) runs the pod's exact command line in the
   * pod, as uid 10001 under the pod's runtime, on JPEG frames like the screencast's; this
   * host's ffprobe reads what it wrote.
   */
  const imageEncodesVideo = async (t: TapTest, podName: string) => {
    const frames = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=5', '-t', '2', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { maxBuffer: 64 << 20 })
    const inPod = (args: string[], input?: Buffer) => spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', chartNs, 'exec', ...(input ? ['-i'] : []), podName, '-c', 'browser', '--', ...args], { input, maxBuffer: 64 << 20 })
    const dir = mkdtempSync(join(tmpdir(), 'nightjar-video-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    for (const [format, codec] of [['webm', 'vp9'], ['mp4', 'h264']] as const) {
      const file = `/tmp/encoder-check.${format}`
      const encoded = inPod(['ffmpeg', ...encoderArgs({ format, fps: 5, width: 320, height: 180, maxBytes: 4 << 20 }, file)], frames)
      t.equal(encoded.status, 0, `the image's ffmpeg encodes ${format}${encoded.status === 0 ? '' : `: ${encoded.stderr.toString().trim().slice(0, 300)}`}`)
      const local = join(dir, `check.${format}`)
      writeFileSync(local, inPod(['cat', file]).stdout)
      inPod(['rm', file])
      const probe = execFileSync('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_name,width,height,nb_read_frames', '-of', 'json', local], { encoding: 'utf8' })
      const stream = JSON.parse(probe).streams?.[0]
      t.same({ codec: stream?.codec_name, width: stream?.width, height: stream?.height, frames: Number(stream?.nb_read_frames) }, { codec, width: 320, height: 180, frames: 10 }, `a ${codec} ${format} of the ten frames, 320×180`)
    }
  }

  /**
   * A session driven end to end with a sealed fill, then the fill's secret looked for in every
   * reply, log, resource and row. `runtime` is the container runtime of the browser pods.
   */
  const drivenEndToEnd = async (t: TapTest, runtime: 'runc' | 'gvisor') => {
    const identity = await grantedPersona(api, { agentId: owner.agentId, value: CANARY, origin: 'login.example.com', reason: `real node test (${runtime})`, name: `shopper-${runtime}` })
    const call = recordingCaller(await mcpClient(t, apiUrl, owner.apiKey), replies)
    const started = (await call('session_start', { identity })).structuredContent as any
    t.equal(started.status, 'live', 'session_start answers live')
    const podName = browserPodOf(started.id)
    const pod = JSON.parse(kubectl(['-n', chartNs, 'get', 'pod', podName, '-o', 'json']))
    t.ok(nodes.includes(pod.spec.nodeName), 'the browser pod runs on a real node')
    t.match(pod.status.containerStatuses[0].image, /nightjar-browser-pod/, 'from the browser-pod image')
    t.equal(pod.spec.runtimeClassName, runtime === 'gvisor' ? 'gvisor' : undefined, `under ${runtime}`)

    const status = kubectl(['-n', chartNs, 'exec', podName, '-c', 'browser', '--', 'cat', '/proc/1/status'])
    t.match(status, /^Uid:\s+10001\s/m, 'the browser container runs as uid 10001')
    t.match(status, /^CapEff:\s+0+$/m, 'and no effective capability')
    const rootMount = kubectl(['-n', chartNs, 'exec', podName, '-c', 'browser', '--', 'cat', '/proc/mounts']).split('\n').find((l) => l.split(' ')[1] === '/')
    t.match(rootMount?.split(' ')[3], /(^|,)ro(,|$)/, `its root filesystem is mounted read-only (${rootMount?.split(' ').slice(0, 4).join(' ')})`)
    if (runtime === 'runc') {
      // gVisor answers the same write with EACCES: it checks permissions before the mount
      const write = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', chartNs, 'exec', podName, '-c', 'browser', '--', 'touch', '/app/x'], { encoding: 'utf8' })
      t.match(write.stderr, /Read-only file system/, 'a write to it is refused as such')
      // gVisor's kernel filters the sandbox as a whole; runc's container has the profile itself
      t.match(status, /^Seccomp:\s+2$/m, 'with seccomp filtering')
      const limit = kubectl(['-n', chartNs, 'exec', podName, '-c', 'browser', '--', 'cat', '/sys/fs/cgroup/memory/memory.limit_in_bytes']).trim()
      t.equal(Number(limit), 1024 ** 3, 'the kubelet set the container\'s memory limit in its cgroup')
    }

    const nav = (await call('navigate', { sessionId: started.id, url: 'http://login.example.com/fill-check.html' })).structuredContent as any
    t.equal(nav.title, 'Fill check', 'the browser reached the page through its egress gateway')
    if (runtime === 'runc') await sandboxProven(t, started, pod)
    else await gvisorProven(t, started, pod)
    const seenBefore = (await call('perceive', { sessionId: started.id })).structuredContent as any
    t.match(seenBefore.snapshot, /\[ref=e\d+\]/, 'perceive answers with refs')
    const fill = (await call('credential_fill', { sessionId: started.id, credentialName: 'login', selector: '#pw' })).structuredContent as any
    t.equal(fill.ok, true, 'the sealed fill typed the credential')
    await call('act', { sessionId: started.id, verb: 'click', selector: '#submit' })
    const seen = (await call('perceive', { sessionId: started.id, full: true })).structuredContent as any
    t.match(shown(seen), `len=${CANARY.length} fnv=${fnv1a(CANARY)}`, 'the page received exactly the secret')
    const shot = await call('screenshot', { sessionId: started.id })
    t.equal(Buffer.from((shot.content as any)[0].data, 'base64').subarray(1, 4).toString(), 'PNG', 'a screenshot from the container')
    await imageEncodesVideo(t, podName)
    logsSeen.push(kubectl(['-n', chartNs, 'logs', podName, '-c', 'browser']))
    t.equal(((await call('session_end', { sessionId: started.id })).structuredContent as any)?.status, 'ended')

    for (const p of JSON.parse(kubectl(['-n', chartNs, 'get', 'pods', '-o', 'json'])).items) {
      for (const c of p.spec.containers) logsSeen.push(spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', chartNs, 'logs', p.metadata.name, '-c', c.name], { encoding: 'utf8' }).stdout)
    }
    const onDisk = podLogDirs.flatMap((dir) => readdirSafe(dir).filter((d) => d.startsWith(`${chartNs}_`)).flatMap((d) => filesUnder(join(dir, d)))).map((f) => readFileSync(f, 'latin1'))
    const everything = kubectl(['-n', chartNs, 'get', 'all,browsersessions,events,configmaps', '-o', 'json'])
    const dump = await pgDump(dbUrl)
    for (const [what, text] of [['MCP replies', replies.join('\n')], ['kubectl logs', logsSeen.join('\n')], ['container log files on the node', onDisk.join('\n')], ['resources and events', everything], ['database rows', dump]] as const) {
      t.notOk(text.includes(CANARY), `the secret is in no ${what}`)
    }
    t.ok(onDisk.length >= 3, `the node's container logs were there to search (${onDisk.length} files)`)
  }

  await t.test('a session live in a real container, driven end to end, with a sealed fill found nowhere afterwards', (t) => drivenEndToEnd(t, 'runc'))

  await t.test('a page that outgrows the memory limit: the container is OOM-killed, the session fails saying so, and the next session starts', async (t) => {
    const started = (await api('POST', '/v1/sessions', {})).body
    t.equal(started.status, 'live')
    const podName = browserPodOf(started.id)
    // the navigate may answer or fail as the renderer dies: what matters is what follows
    await api('POST', `/v1/sessions/${started.id}/navigate`, { url: 'http://example.com/memory-hog.html' })
    const failed = await waitFor(async () => {
      const s = (await api('GET', `/v1/sessions/${started.id}`)).body
      return s.status === 'failed' ? s : undefined
    }, { timeoutMs: 120_000, intervalMs: 500, what: 'the session failed' })
    t.match(failed.failureReason, /OOMKilled/, `session_get says why: ${failed.failureReason}`)
    const pod = JSON.parse(spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', chartNs, 'get', 'pod', podName, '-o', 'json'], { encoding: 'utf8' }).stdout || '{}')
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated
    if (terminated) t.equal(terminated.reason, 'OOMKilled', 'the kubelet reports the container OOMKilled')
    const events = JSON.parse(kubectl(['-n', chartNs, 'get', 'events', '-o', 'json'])).items
    t.ok(events.some((e: any) => e.involvedObject.kind === 'BrowserSession' && /OOMKilled/.test(e.message)), 'a Kubernetes Event on the BrowserSession says OOMKilled')
    const next = (await api('POST', '/v1/sessions', {})).body
    t.equal(next.status, 'live', 'the next session starts')
    const nav = await api('POST', `/v1/sessions/${next.id}/navigate`, { url: 'http://example.com/fill-check.html' })
    t.equal(nav.body?.title, 'Fill check', 'and is driven')
    await api('DELETE', `/v1/sessions/${next.id}`)
  })

  await t.test('a daemon in a network namespace serves a local-egress session through the api-server\'s Service, via kube-proxy', async (t) => {
    const created = await api('POST', '/v1/networks', { name: 'dev' })
    t.equal(created.status, 201)
    const netId = created.body.network.id as string
    // the developer's machine: a namespace of its own with an app on its own loopback; it
    // reaches the cluster only at the Service's ClusterIP, which kube-proxy's rules on this
    // host translate to an api-server Pod
    const dev = await createNamespace(t)
    execFileSync('ip', ['-n', dev.ns, 'route', 'add', 'default', 'via', dev.hostIp])
    const appPort = await freePort()
    await waitForLine(dev.spawn(process.execPath, ['-e', DEV_APP], { PORT: String(appPort) }), 'ready', 15_000)
    const dir = mkdtempSync(join(tmpdir(), 'nj-daemon-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    writeFileSync(join(dir, 'token'), created.body.token.secret, { mode: 0o600 })
    const daemon = dev.spawn(process.execPath, [`${ROOT}bin/nightjar.mjs`, 'daemon', '--network', 'dev', '--control-url', apiUrl.replace(/^http/, 'ws'), '--network-token-file', join(dir, 'token'), '--daemon-host', 'devbox'], { NODE_PATH: ROOT })
    let out = ''
    daemon.stdout!.on('data', (d) => (out += d))
    daemon.stderr!.on('data', (d) => (out += d))
    await waitFor(async () => (await api('GET', `/v1/networks/${netId}/daemons`)).body.some((d: any) => d.reachable), { what: 'the daemon joined through the Service', timeoutMs: 60_000, intervalMs: 250 })
    t.equal((await api('PATCH', `/v1/networks/${netId}`, { declaredHosts: [`localhost:${appPort}`] })).status, 200)
    const opened = await api('POST', '/v1/sessions', { egress: 'local', network: 'dev' })
    t.equal(opened.status, 201)
    const nav = await api('POST', `/v1/sessions/${opened.body.id}/navigate`, { url: `http://localhost:${appPort}/` })
    t.equal(nav.body?.title, 'dev app', 'browser container → egress relay Service → api-server → daemon → the developer\'s app')
    t.equal((await api('DELETE', `/v1/sessions/${opened.body.id}`)).status, 200)
    t.notOk(out.includes(created.body.token.secret), 'the daemon never printed its token')
  })

  await t.test('a rolling restart of the api-server with a session live: the session stays live and is driven through the new pods', async (t) => {
    const s = (await api('POST', '/v1/sessions', {})).body
    t.equal(s.status, 'live')
    const before = JSON.parse(kubectl(['-n', chartNs, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server', '-o', 'json'])).items.map((p: any) => p.metadata.name)
    kubectl(['-n', chartNs, 'rollout', 'restart', `deployment/${release}-api-server`])
    await waitFor(() => {
      const now = JSON.parse(kubectl(['-n', chartNs, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server', '-o', 'json'])).items
      const fresh = now.filter((p: any) => !before.includes(p.metadata.name) && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
      // an old pod counts as gone once it is deleted and out of service: on this machine the
      // kubelet can take minutes to remove an exited pod's network namespace ("device or
      // resource busy"), which is the dev cluster's runtime, not the rollout
      const outOfService = (p: any) => p.metadata.deletionTimestamp && !p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')
      return fresh.length >= before.length && now.every((p: any) => fresh.includes(p) || outOfService(p))
    }, { timeoutMs: 300_000, intervalMs: 1000, what: 'the api-server rolled over to new pods' })
    t.pass('every api-server pod was replaced')
    const after = await api('GET', `/v1/sessions/${s.id}`)
    t.equal(after.body.status, 'live', 'the session is still live')
    const nav = await api('POST', `/v1/sessions/${s.id}/navigate`, { url: 'http://example.com/fill-check.html' })
    t.equal(nav.body?.title, 'Fill check', 'and a new api-server pod drives it')
    await api('DELETE', `/v1/sessions/${s.id}`)
  })

  await t.test('[ISSUE-35] helm upgrade to browserPods.runtimeClassName gvisor: warm pods are replaced, and sessions run in gVisor with Chromium\'s sandbox inside', async (t) => {
    const upgrade = run(`helm upgrade ${release} charts/nightjar -n ${chartNs} --reuse-values --set browserPods.runtimeClassName=gvisor --set browserPods.runtimeClass.create=true`)
    t.equal(upgrade.status, 0, `helm upgrade ${upgrade.status === 0 ? '' : upgrade.stderr.replaceAll(dbUrl, '<DATABASE_URL>').slice(0, 500)}`)
    t.equal(kubectl(['get', 'runtimeclass', 'gvisor', '-o', 'jsonpath={.handler}']), 'runsc', 'the chart made the RuntimeClass, handler runsc')
    await rolledOut(kubeconfig, chartNs, [`${release}-operator`])
    await waitFor(() => {
      const warm = JSON.parse(kubectl(['-n', chartNs, 'get', 'pods', '-l', 'nightjar.dev/pool=warm', '-o', 'json'])).items
      return warm.length > 0 && warm.every((p: any) => p.spec.runtimeClassName === 'gvisor' && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
    }, { timeoutMs: 180_000, intervalMs: 1000, what: 'the warm pool made anew under gVisor' })
    t.pass('the warm pool holds only gVisor pods, Ready')
    await drivenEndToEnd(t, 'gvisor')
    const s = (await api('POST', '/v1/sessions', {})).body
    t.equal(s.sandbox, 'chromium+gvisor', 'a REST session says so too')
    const nav = await api('POST', `/v1/sessions/${s.id}/navigate`, { url: 'http://example.com/fill-check.html' })
    t.equal(nav.body?.title, 'Fill check', 'and is driven')
    await api('DELETE', `/v1/sessions/${s.id}`)
  })
})

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []))
}

/** every row of every table, as text (the canary tests' dump, over a client of the cluster's database) */
async function pgDump(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await dumpAllTables(c)
  } finally {
    await c.end()
  }
}

/**
 * Chromium's sandbox in a browser pod on the real node (runc), read from this host's
 * /proc — the container's processes run on this kernel: renderers under seccomp-bpf in user and
 * network namespaces of their own holding only lo, no --no-sandbox, no root, and the pod
 * process unreadable from Chromium's uid. The pod runs under the chart's seccomp profile.
 */
async function sandboxProven(t: TapTest, session: { id: string; sandbox?: string }, pod: any) {
  t.equal(session.sandbox, 'chromium', '[ISSUE-35] the session says it runs in Chromium\'s sandbox')
  t.same(pod.spec.securityContext.seccompProfile, { type: 'Localhost', localhostProfile: 'nightjar/chromium-sandbox.json' }, 'the pod runs under the chart\'s seccomp profile')
  const facts = await waitFor(() => {
    const procs = podProcesses(pod.metadata.uid).map((pid) => ({ pid, cmd: readCmdline(pid), facts: processFacts(pid) }))
    return procs.some((p) => p.facts?.type === 'renderer') ? procs : undefined
  }, { what: 'the browser pod\'s renderers on this host' })
  const nodeProc = facts.find((p) => /^\S*node \S*browser-pod\/main\.ts/.test(p.cmd))!
  t.ok(nodeProc, 'the pod process found in the pod\'s cgroup')
  t.notOk(facts.some((p) => /tini/.test(p.cmd)), 'no init before it to hold the token in its environment')
  const chromium = facts.map((p) => p.facts).filter((f): f is ChromiumProcess => !!f)
  const renderers = chromium.filter((p) => p.type === 'renderer')
  const podUserNs = readlinkSafe(`/proc/${nodeProc.pid}/ns/user`)
  const podNetNs = readlinkSafe(`/proc/${nodeProc.pid}/ns/net`)
  const podFilters = seccompFiltersOf(nodeProc.pid)
  t.ok(renderers.length >= 1, `renderers found: ${renderers.length}`)
  for (const r of renderers) {
    t.equal(r.seccomp, 2, `renderer ${r.pid}: Seccomp 2`)
    // the container's own profile filters every process of it: Chromium's is stacked on top
    t.ok(r.seccompFilters > podFilters, `renderer ${r.pid}: Chromium's filter on top of the container's (${r.seccompFilters} > ${podFilters})`)
    t.not(r.userNs, podUserNs, `renderer ${r.pid}: a user namespace of its own`)
    t.not(r.netNs, podNetNs, `renderer ${r.pid}: a network namespace other than the pod's`)
    t.same(r.interfaces, ['lo'], `renderer ${r.pid}: only lo`)
  }
  t.same(chromium.filter((p) => p.noSandboxFlag).map((p) => p.pid), [], 'no Chromium process with --no-sandbox')
  t.same(chromium.filter((p) => p.uids.includes(0)).map((p) => p.pid), [], 'none as root')
  const attempt = await readAs(10001, nodeProc.pid)
  t.same(attempt, { mem: 'EACCES', environ: 'EACCES' }, 'the pod process\'s memory and environment are refused to Chromium\'s uid')
  // and no process of the pod that Chromium's uid can read holds the node token
  const token = execFileSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', pod.metadata.namespace, 'get', 'secret', pod.metadata.annotations['nightjar.dev/token-secret'], '-o', 'jsonpath={.data.token}'], { encoding: 'utf8' })
  const plain = Buffer.from(token, 'base64').toString('utf8')
  for (const p of facts) {
    const r = await readAs(10001, p.pid, plain)
    t.notOk(r.environHolds, `process ${p.pid} (${p.cmd.split(' ')[0]}): the node token is not in any environment Chromium's uid can read`)
  }
}

/**
 * A browser pod under gVisor on the real node. From this host: the pod's processes
 * are gVisor's (runsc's sandbox, gofer and the stubs it runs tasks in), no Chromium and no
 * Node — a page's code meets gVisor's kernel, not this one. From inside, through gVisor's
 * /proc: Chromium's sandbox is on there too (renderers under seccomp-bpf, in user namespaces
 * of their own, seeing no interface of the pod's), and the pod process stays unreadable.
 */
async function gvisorProven(t: TapTest, session: { id: string; sandbox?: string }, pod: any) {
  t.equal(session.sandbox, 'chromium+gvisor', 'the session says it runs in Chromium\'s sandbox inside gVisor')
  const onHost = podProcesses(pod.metadata.uid).map((pid) => ({ pid, cmd: readCmdline(pid) }))
  t.ok(onHost.some((p) => /^runsc-sandbox/.test(p.cmd)), 'this host sees the pod as a runsc sandbox')
  // the program, not its arguments: a further node's paths (runsc's bundle) hold "node"
  const program = (cmd: string) => cmd.split(' ')[0].split('/').pop() ?? ''
  t.same(onHost.map((p) => program(p.cmd)).filter((name) => /chrom|node/i.test(name)), [], 'and no Chromium or Node process of it')
  const exec = (args: string[], input?: string) => execFileSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', pod.metadata.namespace, 'exec', ...(input === undefined ? [] : ['-i']), pod.metadata.name, '-c', 'browser', '--', ...args], { encoding: 'utf8', input })
  t.match(exec(['dmesg']), /Starting gVisor/, 'inside, the kernel is gVisor\'s')
  const token = execFileSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', pod.metadata.namespace, 'get', 'secret', pod.metadata.annotations['nightjar.dev/token-secret'], '-o', 'jsonpath={.data.token}'], { encoding: 'utf8' })
  const procs = await waitFor(() => {
    const list = JSON.parse(exec(['node', '-e', INSIDE_PROBE], Buffer.from(token, 'base64').toString('utf8'))) as InsideProcess[]
    return list.some((p) => p.type === 'renderer') ? list : undefined
  }, { what: 'renderers inside the gVisor sandbox' })
  const nodeProc = procs.find((p) => /^\S*node \S*browser-pod\/main\.ts/.test(p.cmd))
  t.ok(nodeProc, 'the pod process seen inside', { commands: procs.map((p) => p.cmd.split(' ').slice(0, 2).join(' ')) })
  const renderers = procs.filter((p) => p.type === 'renderer')
  t.ok(renderers.length >= 1, `renderers found: ${renderers.length}`)
  for (const r of renderers) {
    t.equal(r.seccomp, 2, `renderer ${r.pid}: Seccomp 2`)
    t.not(r.uidMap, nodeProc?.uidMap, `renderer ${r.pid}: a user namespace of its own (uid_map ${r.uidMap})`)
    t.notOk(Array.isArray(r.interfaces) && r.interfaces.includes('eth0'), `renderer ${r.pid}: no view of the pod's eth0 (${String(r.interfaces)})`)
  }
  const chromium = procs.filter((p) => p.type !== undefined)
  t.same(chromium.filter((p) => /(^|\s)--no-sandbox(\s|$)/.test(p.cmd)).map((p) => p.pid), [], 'no Chromium process with --no-sandbox')
  t.same(chromium.filter((p) => p.uids.includes(0)).map((p) => p.pid), [], 'none as root')
  t.equal(nodeProc?.mem, 'EACCES', 'the pod process\'s memory is refused to Chromium\'s uid')
  // gVisor shows the environment block to the uid whatever the dumpable flag: the pod ran
  // itself again without the token in it, so what can be read holds none
  t.equal(nodeProc?.environHolds, false, `its environment (${nodeProc?.environ}) holds no node token`)
  t.same(procs.filter((p) => p.environHolds).map((p) => p.cmd.split(' ')[0]), [], 'no process Chromium\'s uid can read holds the node token in its environment')
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
  } catch {
    return ''
  }
}

function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return 'unreadable'
  }
}
