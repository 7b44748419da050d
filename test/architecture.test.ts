// The layering rules of docs/ARCHITECTURE.md, read from the import statements of every
// source file: imports point down only, the leaves stay leaves, and no file imports
// itself back through a cycle. A rule broken names the file and the import.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join, normalize } from 'node:path'

const ROOT = new URL('../', import.meta.url).pathname
// every tracked script of every folder, static and dynamic imports alike (a dynamic import
// is still a dependency: it only comes later)
const CODE = /\.(ts|mts|cts|mjs|cjs|js)$/
const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter((f) => CODE.test(f))

const IMPORT = /(?:^|[\s;}])(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]|\bimport\s*\(\s*['"](\.[^'"]+)['"]/gm
/** the local files a script imports, resolved from its own folder */
const importsOf = (file: string, text: string) => [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(file), m[1] ?? m[2])))
const graph = new Map<string, string[]>()
for (const f of files) graph.set(f, importsOf(f, readFileSync(join(ROOT, f), 'utf8')))
/** a file's top-level folder; a file at the root of the repository is '(root)' */
const top = (f: string) => (f.includes('/') ? f.split('/')[0] : '(root)')

const PRODUCT = ['crds', 'telemetry', 'ports', 'watch', 'contracts', 'tunnel', 'sdk', 'browser-pod', 'operator', 'api-server', 'cli']
/** What each top-level folder may import (besides itself); '*' is anything. */
const ALLOWED: Record<string, string[] | '*'> = {
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
  // the npm bin: the CLI
  bin: ['cli'],
  // the images: Dockerfiles, and the images' names and refs the build and the cluster share
  docker: [],
  // the development cluster (`npm run cluster`, the cluster and node tests) is tooling above
  // the product: it may use any layer, and no product folder may use it
  devcluster: [...PRODUCT, 'docker'],
  // build, generation and developer scripts: above the development cluster they start
  scripts: [...PRODUCT, 'docker', 'devcluster'],
  // the linter's configuration reads the project's lint rules
  '(root)': ['scripts'],
  // a developer's measuring harness, in no image: may use the tests' fixtures
  bench: '*',
  test: '*',
}
const mayImport = (from: string, to: string) => {
  const allowed = ALLOWED[top(from)]
  return top(to) === top(from) || allowed === '*' || (allowed ?? []).includes(top(to))
}
/** imports that point up (or sideways where the table forbids it) */
const upward = [...graph].flatMap(([f, deps]) => deps.filter((d) => !mayImport(f, d)).map((d) => `${f} imports ${d}`))

t.test('imports point down only: each folder imports only the layers below it', async (t) => {
  const unknown = [...new Set(files.map(top))].filter((d) => !(d in ALLOWED))
  t.same(unknown, [], 'every folder with code has a row in ALLOWED (and docs/ARCHITECTURE.md)')
  t.same(upward, [], 'no import breaks a layering rule')
})

/** sets of files that reach themselves through their imports (Tarjan's strongly connected components) */
function fileCycles(): string[][] {
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
  return cycles
}
const cycles = fileCycles()

t.test('no import cycle between files', async (t) => {
  t.same(cycles, [], 'no file reaches itself through its imports')
})

// One-way rooms in every product folder: a room is a folder's subfolder, or a file at its
// top (browser-pod/perception/, browser-pod/session.ts). Rooms may use each other one way
// only; a type-only import counts too (it is still a dependency a reader follows).
const ROOMED = [...PRODUCT, 'devcluster', 'docker', 'scripts', 'bin']
const roomOf = (f: string) => f.split('/')[1].replace(CODE, '')
/** every pair of rooms of one folder that import each other, with one import each way */
function roomCircles(g: Map<string, string[]>): string[] {
  const edges = new Map<string, Map<string, string>>()
  for (const [f, deps] of g) {
    if (!ROOMED.includes(top(f)) || !f.includes('/')) continue
    for (const d of deps) {
      if (top(d) !== top(f) || roomOf(d) === roomOf(f)) continue
      const from = `${top(f)}/${roomOf(f)}`, to = `${top(f)}/${roomOf(d)}`
      if (!edges.has(from)) edges.set(from, new Map())
      edges.get(from)!.set(to, `${f} imports ${d}`)
    }
  }
  const pairs: string[] = []
  for (const [a, out] of edges) {
    for (const [b, why] of out) if (a < b && edges.get(b)?.has(a)) pairs.push(`${a} <-> ${b} (${why}; ${edges.get(b)!.get(a)})`)
  }
  return pairs
}
const roomPairs = roomCircles(graph)

t.test('no two rooms of a folder import each other, in every product folder', async (t) => {
  t.same(roomPairs, [], 'room pairs that import each other')
  const sample = new Map([['browser-pod/perception/render.ts', ['browser-pod/secrets/echo-guard.ts']], ['browser-pod/secrets/secure-fill.ts', ['browser-pod/perception/refs.ts']]])
  t.equal(roomCircles(sample).length, 1, 'two rooms importing each other are caught (the checker is not vacuous)')
  t.ok(ROOMED.every((d) => files.some((f) => top(f) === d)), 'every roomed folder was read')
})

// docs/ARCHITECTURE.md states what this file counts, so the page and the check agree.
t.test('docs/ARCHITECTURE.md states the counts this test checks', async (t) => {
  const page = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8')
  const stated = /\*\*(\d+) upward imports, (\d+) import circles\*\*/.exec(page)
  t.ok(stated, 'the page states "**N upward imports, N import circles**"')
  t.same(stated && [Number(stated[1]), Number(stated[2])], [upward.length, cycles.length + roomPairs.length], 'the stated counts are the measured ones')
})

t.test('the rule catches a violation (the checker is not vacuous)', async (t) => {
  t.notOk(mayImport('browser-pod/x.ts', 'api-server/app.ts'), 'browser-pod importing the api-server would be refused')
  t.notOk(mayImport('devcluster/images.ts', 'scripts/images.mjs'), 'the development cluster importing a script would be refused')
  t.same(importsOf('devcluster/x.ts', "const { f } = await import('../scripts/images.mjs')"), ['scripts/images.mjs'], 'a dynamic import is read')
  t.same(importsOf('a/x.ts', "import type { T } from './t.ts'\nexport { y } from '../b/y.ts'"), ['a/t.ts', 'b/y.ts'], 'type-only imports and re-exports are read')
  t.ok(graph.size > 500, `the tree was read (${graph.size} files)`)
  t.notOk((ALLOWED.cli as string[]).includes('devcluster'), 'the composition root may not start the development cluster')
  t.ok(graph.has('devcluster/supervisor.ts') && graph.has('scripts/images.mjs') && graph.has('telemetry/sdk.ts'), 'tooling and every product folder were read')
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
  // an org's browser extensions: what a start loads and what the sealed fill asks of their trust
  extensions: 5,
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
  const fillers = [...graph].filter(([f, deps]) => PRODUCT.includes(top(f)) && !f.startsWith('browser-pod/secrets/') && deps.includes('browser-pod/secrets/secure-fill.ts')).map(([f]) => f)
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
