// The layering rules of docs/ARCHITECTURE.md, read from the import statements of every
// source file: imports point down only, the leaves stay leaves, and no file imports
// itself back through a cycle. A rule broken names the file and the import.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join, normalize } from 'node:path'

const ROOT = new URL('../', import.meta.url).pathname
const SOURCE_DIRS = ['api-server', 'browser-pod', 'operator', 'ports', 'watch', 'contracts', 'crds', 'tunnel', 'sdk', 'cli', 'devcluster', 'telemetry']
const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n').filter((f) => SOURCE_DIRS.includes(f.split('/')[0]))

const IMPORT = /^\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/gm
const graph = new Map<string, string[]>()
for (const f of files) {
  const text = readFileSync(join(ROOT, f), 'utf8')
  graph.set(f, [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(f), m[1]))))
}
const top = (f: string) => f.split('/')[0]

/** What each top-level folder may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  crds: [],
  // tracing set-up and trace-context helpers for every process: OpenTelemetry only
  telemetry: [],
  // the ports the api-server and the operator stand on (ResourceClient, PodRuntime, …) and their typed errors
  ports: ['crds'],
  // the Informer (a watched cache over the ResourceClient port) and the backoff it shares with the workqueue
  watch: ['ports', 'crds'],
  contracts: ['crds'],
  tunnel: ['contracts'],
  sdk: ['contracts'],
  'browser-pod': ['contracts', 'crds', 'tunnel', 'telemetry'],
  operator: ['contracts', 'crds', 'ports', 'watch', 'telemetry'],
  // the api-server writes and watches resources through the ResourceClient port of the
  // ports/ leaf (its types, its typed errors) and watch/'s Informer; nothing of the operator
  'api-server': ['contracts', 'crds', 'tunnel', 'ports', 'watch', 'telemetry'],
  cli: ['api-server', 'operator', 'ports', 'watch', 'contracts', 'crds', 'tunnel', 'telemetry'],
  // the development cluster (`npm run cluster`, the cluster and node tests) is tooling above
  // everything: it may use any layer, and no layer may use it
  devcluster: ['cli', 'api-server', 'operator', 'browser-pod', 'ports', 'watch', 'contracts', 'crds', 'tunnel', 'sdk', 'telemetry'],
}

t.test('imports point down only: each folder imports only the layers below it', async (t) => {
  const broken: string[] = []
  for (const [f, deps] of graph) {
    for (const d of deps) {
      if (top(d) === top(f)) continue
      const ok = ALLOWED[top(f)].some((a) => d === a || top(d) === a)
      if (!ok) broken.push(`${f} imports ${d}`)
    }
  }
  t.same(broken, [], 'no import breaks a layering rule')
})

t.test('no import cycle between source files', async (t) => {
  // Tarjan's strongly connected components over the file graph
  let index = 0
  const idx = new Map<string, number>(), low = new Map<string, number>(), onStack = new Set<string>(), stack: string[] = []
  const cycles: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index); low.set(v, index); index++
    stack.push(v); onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)) }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = []
      let w: string
      do { w = stack.pop()!; onStack.delete(w); comp.push(w) } while (w !== v)
      if (comp.length > 1) cycles.push(comp.sort())
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  t.same(cycles, [], 'no file reaches itself through its imports')
})

t.test('the rule catches a violation (the checker is not vacuous)', async (t) => {
  const sample = 'browser-pod/x.ts'
  const d = normalize(join(dirname(sample), '../api-server/app.ts'))
  t.notOk(ALLOWED[top(sample)].some((a) => d === a || top(d) === a), 'browser-pod importing the api-server would be refused')
  t.ok(graph.size > 100, `the source tree was read (${graph.size} files)`)
  t.notOk(ALLOWED.cli.includes('devcluster'), 'the composition root may not start the development cluster')
  t.ok(graph.has('devcluster/supervisor.ts'), 'the development cluster was read')
})

// Tests may import the product; the product never imports its tests. Every tracked script
// outside test/ is read, .ts and .mjs alike, static and dynamic imports: `npm run cluster`,
// the CLI, the images' sources, the build scripts. bench/ is the one exception: a measuring
// harness for developers (`npm run bench`), in no image and run by no user, that drives the
// service with the tests' fixtures (Chromium flags, the burst client, the real node).
const MAY_IMPORT_TESTS = ['test', 'bench']
const ANY_IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)['"](\.[^'"]+)['"]/g
/** the test/ files a script imports, resolved from the script's own folder */
const testImports = (file: string, text: string) =>
  [...text.matchAll(ANY_IMPORT)].map((m) => normalize(join(dirname(file), m[1]))).filter((d) => d.startsWith('test/'))

t.test('nothing outside test/ imports test/ (bench/ alone may)', async (t) => {
  const scripts = execFileSync('git', ['ls-files', '*.ts', '*.mts', '*.mjs', '*.js', '*.cjs'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n').filter((f) => f && !MAY_IMPORT_TESTS.includes(top(f)))
  const broken = scripts.flatMap((f) => testImports(f, readFileSync(join(ROOT, f), 'utf8')).map((d) => `${f} imports ${d}`))
  t.same(broken, [], 'product code and tooling stand without the tests')
  t.ok(scripts.includes('scripts/cluster.ts') && scripts.some((f) => f.startsWith('devcluster/')), `the scripts were read (${scripts.length} files)`)
  t.same(testImports('scripts/x.ts', "const { sweep } = await import('../test/cluster/stale.ts')"), ['test/cluster/stale.ts'], 'a dynamic import of a test file is caught')
  t.same(testImports('devcluster/x.ts', "import { waitFor } from '../test/helpers/wait.ts'"), ['test/helpers/wait.ts'], 'a static one too')
})

// Inside the api-server: four layers of rooms (docs/ARCHITECTURE.md, "Inside the
// api-server"). A room is a top-level folder (or file) of api-server/. A room imports rooms
// of lower layers, or of its own layer where that layer allows it (the domain), and no two
// rooms import each other.
const API_LAYERS: Record<string, number> = {
  app: 0,
  http: 1, mcp: 1, console: 1, oauth: 1, cdp: 1,
  // what two or more doors share (a helper one door alone uses lives in its room)
  'door-kit': 2,
  operations: 3,
  // the type of the app's service bag, which handlers receive: below them, above the domain it names
  services: 4,
  sessions: 5, personas: 5, networks: 5, recordings: 5, authstate: 5, replicas: 5, limits: 5, 'tunnel-broker': 5,
  // webhooks listen on the events port (platform) that sessions and personas emit through
  webhooks: 5,
  // the secret path (the sealed fill's pipeline): above personas and sessions, which it joins
  secrets: 5,
  store: 6, kms: 6, auth: 6, audit: 6, config: 6, events: 6,
  // the product's Prometheus instruments, which the domain counts into
  metrics: 6,
}
/** layers whose rooms may use each other (one way: the cycle check below still holds) */
const SIDEWAYS = new Set([5, 6])
const room = (f: string) => f.split('/')[1].replace(/\.ts$/, '')
const apiEdges = new Map<string, Set<string>>()
for (const [f, deps] of graph) {
  if (top(f) !== 'api-server') continue
  for (const d of deps) {
    if (top(d) !== 'api-server' || room(d) === room(f)) continue
    if (!apiEdges.has(room(f))) apiEdges.set(room(f), new Set())
    apiEdges.get(room(f))!.add(`${room(d)}\t${f} imports ${d}`)
  }
}

/** An import breaks the api-server's layers when it points up, or sideways where the layer forbids it. */
function layerBreak(from: string, to: string): boolean {
  const a = API_LAYERS[from], b = API_LAYERS[to]
  return b < a || (a === b && !SIDEWAYS.has(a))
}

t.test('api-server rooms import downward only: doors → door kit → operations → domain → platform', async (t) => {
  const unknown = [...new Set([...graph.keys()].filter((f) => top(f) === 'api-server').map(room))].filter((r) => !(r in API_LAYERS))
  t.same(unknown, [], 'every api-server room has a layer (add a new folder to API_LAYERS and docs/ARCHITECTURE.md)')
  const broken: string[] = []
  for (const [from, edges] of apiEdges) {
    for (const e of edges) {
      const [to, where] = e.split('\t')
      if (layerBreak(from, to)) broken.push(where)
    }
  }
  t.same(broken, [], 'no import points up a layer or across doors')
})

// The door kit holds only what doors share: a helper that one door alone uses lives in that
// door's room (docs/ARCHITECTURE.md, "the doors' kit"). What app.ts wires in is every door's.
const DOORS = Object.keys(API_LAYERS).filter((r) => API_LAYERS[r] === 1)
t.test('every door-kit file is used by two doors or more', async (t) => {
  const users = (kit: string) => new Set([...graph].filter(([f, deps]) => top(f) === 'api-server' && DOORS.includes(room(f)) && deps.includes(kit)).map(([f]) => room(f)))
  const kit = [...graph.keys()].filter((f) => f.startsWith('api-server/door-kit/'))
  t.ok(kit.length >= 5, `the door kit was read (${kit.length} files)`)
  const shared = (k: string) => users(k).size >= 2 || graph.get('api-server/app.ts')!.includes(k)
  const lonely = kit.filter((k) => !shared(k) && !kit.some((other) => graph.get(other)!.includes(k) && shared(other))).map((k) => `${k}: ${[...users(k)].join(', ') || 'no door'}`)
  t.same(lonely, [], 'kit files one door alone uses (move them into that door)')
})

t.test('no two api-server rooms import each other', async (t) => {
  const targets = (r: string) => new Set([...(apiEdges.get(r) ?? [])].map((e) => e.split('\t')[0]))
  const pairs: string[] = []
  for (const a of apiEdges.keys()) for (const b of targets(a)) if (a < b && targets(b).has(a)) pairs.push(`${a} <-> ${b}`)
  t.same(pairs, [], 'room pairs that import each other')
})

t.test('the api-server layer rule is not vacuous', async (t) => {
  t.ok(layerBreak('sessions', 'operations'), 'the domain importing operations is refused')
  t.ok(layerBreak('mcp', 'http'), 'one door borrowing from another is refused')
  t.notOk(layerBreak('operations', 'sessions'), 'operations using the domain is fine')
  t.ok(apiEdges.size > 15, `api-server rooms were read (${apiEdges.size})`)
})

// The secret path has one home on each side (docs/ARCHITECTURE.md, "The secret path: two
// homes"): in the api-server only api-server/secrets/ hands a secret to a pod, and in the
// pod the secure fill is reached only through the pod API's route.
t.test('the secret path has one home on each side', async (t) => {
  const sendsSecrets = [...graph.keys()]
    .filter((f) => top(f) === 'api-server' && f !== 'api-server/sessions/pod-client.ts' && !f.startsWith('api-server/secrets/'))
    .filter((f) => /\.secureType\(/.test(readFileSync(join(ROOT, f), 'utf8')))
  t.same(sendsSecrets, [], 'api-server files outside secrets/ that call PodClient.secureType')
  const fillers = [...graph].filter(([f, deps]) => !f.startsWith('browser-pod/secrets/') && deps.includes('browser-pod/secrets/secure-fill.ts')).map(([f]) => f)
  t.same(fillers, ['browser-pod/pod-api.ts'], 'only the pod API route reaches the secure fill')
  t.ok(graph.has('api-server/secrets/fill.ts') && graph.has('browser-pod/secrets/fill-lock.ts'), 'both homes were read')
})

// One word, one meaning (docs/ARCHITECTURE.md, "Glossary"): the old names of renamed rooms,
// files and identifiers stay gone, so a word does not drift back into a second meaning.
// Each row: what is refused, and the word to use instead.
const RETIRED_PATHS: [RegExp, string][] = [
  [/^resources\//, 'ports/ (the ports and their typed errors) or watch/ (the Informer, backoff)'],
  [/^api-server\/control\//, 'api-server/tunnel-broker/ ("control" is who drives a session)'],
  [/^api-server\/doors\//, 'api-server/door-kit/ (or the one door that uses it)'],
  [/(^|\/)node-(api|client|directory)(\.test)?\.ts$|^api-server\/sessions\/nodes\.ts$|catalogue-node\.ts$/, 'pod-… (the browser pod\'s API; "node" is a Kubernetes node)'],
  [/drive-pages\.ts$|actions\/pages\.ts$/, 'drive-tabs.ts, actions/tabs.ts (a tab is a tab; "page" is a web page)'],
  [/catalogue-pages\.ts$/, 'catalogue-non-json.ts'],
]
const RETIRED_NAMES: [string, string][] = [
  ['NodeClient', 'PodClient'], ['NodeClients', 'PodClients'], ['NodeDirectory', 'PodDirectory'], ['KubeNodeDirectory', 'KubePodDirectory'],
  ['NodeAccess', 'PodAccess'], ['nodeRoutes', 'podRoutes'], ['NodeRoute', 'PodRoute'], ['NodeRouteName', 'PodRouteName'], ['NodeInput', 'PodInput'], ['NodeOutput', 'PodOutput'],
  ['configureNode', 'configurePod'], ['createNodeApi', 'createPodApi'], ['NODE_ERRORS', 'POD_ERRORS'], ['NODE_CDP_PATH', 'POD_CDP_PATH'], ['NODE_LIVE_PATH', 'POD_LIVE_PATH'],
  ['pageContracts', 'tabContracts'], ['pageDrives', 'tabDrives'], ['pageActions', 'elementActions'],
  ['CONTROL_PATH', 'TUNNEL_PATH'], ['controlUnavailable', 'tunnelUnavailable'], ['controlEndpoint', 'tunnelEndpoint'],
  ['RelayDoor', 'RelayServer'],
]
const retiredNameIn = (text: string) => RETIRED_NAMES.filter(([old]) => new RegExp(`\\b${old}\\b`).test(text))

t.test('one word, one meaning: retired names of rooms, files and identifiers stay gone', async (t) => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
  const paths = tracked.flatMap((f) => RETIRED_PATHS.filter(([re]) => re.test(f)).map(([, use]) => `${f}: use ${use}`))
  t.same(paths, [], 'files under a retired name')
  const code = tracked.filter((f) => /\.(ts|mts|mjs)$/.test(f) && f !== 'test/architecture.test.ts')
  const names = code.flatMap((f) => retiredNameIn(readFileSync(join(ROOT, f), 'utf8')).map(([old, use]) => `${f}: ${old} → ${use}`))
  t.same(names, [], 'retired identifiers')
  t.ok(code.length > 300, `the sources were read (${code.length} files)`)
  t.ok(RETIRED_PATHS.some(([re]) => re.test('api-server/control/broker.ts')) && RETIRED_PATHS.some(([re]) => re.test('browser-pod/node-api.ts')), 'a retired path is caught')
  t.notOk(RETIRED_PATHS.some(([re]) => re.test('test/node/real-node.test.ts') || re.test('test/cluster/node-pods.ts')), 'a Kubernetes node\'s files are not')
  t.same(retiredNameIn('const c = new NodeClient(url)').map(([old]) => old), ['NodeClient'], 'a retired identifier is caught')
  t.same(retiredNameIn('const c = new PodClient(url); NodeClientsX'), [], 'and only as a whole word')
})
