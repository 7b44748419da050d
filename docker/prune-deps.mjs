#!/usr/bin/env node
// Keeps in node_modules only what one image's program can load: the packages listed in
// docker/<image>.deps and what they need, resolved as Node resolves them, so the operator
// image carries no Fastify or Playwright and the pod no AWS SDK. Run by each Dockerfile's
// deps stage after `npm ci --omit=dev`; plain JavaScript, since nothing is installed for it.
//   node docker/prune-deps.mjs docker/operator.deps [node_modules] [--dry-run]
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const args = process.argv.slice(2)
const dryRun = args.includes('--dry-run')
const [listFile, modulesDir = 'node_modules'] = args.filter((a) => a !== '--dry-run')
if (!listFile) {
  process.stderr.write('usage: node docker/prune-deps.mjs <image>.deps [node_modules] [--dry-run]\n')
  process.exit(2)
}
const root = resolve(modulesDir)
// a link is someone else's tree (a worktree sharing a checkout's node_modules): never prune through it
if (lstatSync(root).isSymbolicLink()) {
  process.stderr.write(`prune-deps: ${modulesDir} is a symbolic link; prune a copy of its own\n`)
  process.exit(2)
}
const roots = readFileSync(listFile, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean)

/**
 * The directory a package named `name` resolves to from the package in `fromDir` (Node's
 * walk up the node_modules chain, ending at the top level); `fromDir` undefined: the top level.
 */
function locate(name, fromDir) {
  for (let dir = fromDir; dir && dir.startsWith(root + '/'); dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
  }
  const top = join(root, name)
  return existsSync(join(top, 'package.json')) ? top : undefined
}

/**
 * Packages the package at `dir` names in its `imports` map only under conditions Node never
 * matches, and loads nowhere in its own code by name: what Node never loads for it.
 */
function otherRuntimeOnly(pkg, dir) {
  const forNode = new Set()
  const forOthers = new Set()
  const walk = (target, nodeMatches) => {
    if (typeof target === 'string') {
      if (!target.startsWith('.') && !target.startsWith('#')) {
        const name = target.startsWith('@') ? target.split('/').slice(0, 2).join('/') : target.split('/')[0]
        ;(nodeMatches ? forNode : forOthers).add(name)
      }
    } else if (target && typeof target === 'object') {
      for (const [cond, t] of Object.entries(target)) walk(t, nodeMatches && !['bare', 'browser', 'react-native', 'deno', 'worker', 'edge-light', 'workerd'].includes(cond))
    }
  }
  for (const t of Object.values(pkg.imports ?? {})) walk(t, true)
  const candidates = [...forOthers].filter((n) => !forNode.has(n))
  if (!candidates.length) return new Set()
  const code = sources(dir).map((f) => readFileSync(f, 'utf8')).join('\n')
  return new Set(candidates.filter((n) => !new RegExp(`(?:require\\(|import\\(|from)\\s*['"]${n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"/]`).test(code)))
}

/** a package's own JavaScript files (not those of its nested node_modules) */
function sources(dir) {
  const out = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...sources(p))
    else if (/\.[cm]?js$/.test(e.name)) out.push(p)
  }
  return out
}

const kept = new Set()
const missing = []
const queue = roots.map((name) => ({ name, from: undefined, required: true }))
while (queue.length) {
  const { name, from, required } = queue.pop()
  const dir = locate(name, from)
  if (!dir) {
    if (required) missing.push(name)
    continue
  }
  if (kept.has(dir)) continue
  kept.add(dir)
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  // optional and peer dependencies are kept when installed (npm installs the ones that apply),
  // but not one the package maps only for another runtime: tar-fs's `imports` send `fs` to
  // bare-fs under the `bare` condition and to Node's own under `default`
  const elsewhere = otherRuntimeOnly(pkg, dir)
  for (const dep of Object.keys(pkg.dependencies ?? {})) if (!elsewhere.has(dep)) queue.push({ name: dep, from: dir, required: true })
  for (const dep of [...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]) {
    if (!elsewhere.has(dep)) queue.push({ name: dep, from: dir, required: false })
  }
}
if (missing.length) {
  process.stderr.write(`prune-deps: not installed: ${[...new Set(missing)].join(', ')} (run npm ci --omit=dev first)\n`)
  process.exit(1)
}

/** every top-level package directory: name and @scope/name */
function topLevel() {
  const out = []
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.')) continue
    const p = join(root, entry)
    if (entry.startsWith('@')) for (const sub of readdirSync(p)) out.push(join(p, sub))
    else out.push(p)
  }
  return out
}

function size(p) {
  const st = lstatSync(p)
  if (!st.isDirectory()) return st.size
  let n = 0
  for (const e of readdirSync(p)) n += size(join(p, e))
  return n
}

const drop = topLevel().filter((p) => ![...kept].some((k) => k === p || k.startsWith(p + '/')))
const mb = (n) => `${(n / 1048576).toFixed(1)} MB`
let freed = 0
for (const p of drop) {
  freed += size(p)
  if (!dryRun) rmSync(p, { recursive: true, force: true })
}
// command links of deleted packages
const bin = join(root, '.bin')
if (!dryRun && existsSync(bin)) {
  for (const link of readdirSync(bin)) {
    const p = join(bin, link)
    try {
      if (lstatSync(p).isSymbolicLink() && !existsSync(resolve(bin, readlinkSync(p)))) rmSync(p)
    } catch {}
  }
}
for (const scope of readdirSync(root).filter((e) => e.startsWith('@'))) {
  if (!dryRun && readdirSync(join(root, scope)).length === 0) rmSync(join(root, scope), { recursive: true })
}
// what no program loads at run time: type declarations, TypeScript sources (Node does not
// strip types under node_modules), source maps, and documents; licences stay
const DEAD = /\.(?:d\.[cm]?ts|[cm]?ts|map|md|markdown)$/i
// and a package's own tests (bintrees ships 2.3 MB of them)
const TEST_DIRS = new Set(['test', 'tests', '__tests__'])
function sweep(dir) {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory() && TEST_DIRS.has(e.name) && existsSync(join(dir, 'package.json')) && !mainIsIn(dir, e.name)) {
      n += size(p)
      if (!dryRun) rmSync(p, { recursive: true, force: true })
    } else if (e.isDirectory()) n += sweep(p)
    else if (e.isFile() && DEAD.test(e.name) && !/^licen[cs]e/i.test(e.name)) {
      n += lstatSync(p).size
      if (!dryRun) rmSync(p)
    }
  }
  return n
}
/** whether the package at `dir` loads its entry from the subdirectory `sub` */
function mainIsIn(dir, sub) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  return [pkg.main, JSON.stringify(pkg.exports ?? '')].some((m) => typeof m === 'string' && new RegExp(`(^|[/"])(\\./)?${sub}/`).test(m))
}

// Builds only a bundler loads: OpenTelemetry ships each package three times (build/src for
// Node, build/esm and build/esnext named by `module`/`esnext` and by export conditions of
// those names, which Node never matches). A directory goes when only such names reach it
// and no code outside it loads a path through it.
const BUNDLER_FIELDS = ['module', 'esnext', 'jsnext:main']
const BUNDLER_CONDITIONS = new Set(['module', 'esnext', 'browser'])
function bundlerOnlyDirs(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const forNode = [typeof pkg.main === 'string' ? pkg.main : 'index.js']
  const forBundlers = BUNDLER_FIELDS.map((f) => pkg[f]).filter((v) => typeof v === 'string')
  const walk = (target, nodeMatches) => {
    if (typeof target === 'string') (nodeMatches ? forNode : forBundlers).push(target)
    else if (Array.isArray(target)) for (const t of target) walk(t, nodeMatches)
    else if (target && typeof target === 'object') for (const [cond, t] of Object.entries(target)) walk(t, nodeMatches && !BUNDLER_CONDITIONS.has(cond))
  }
  walk(pkg.exports, true)
  const clean = (p) => p.replace(/^\.\//, '')
  const nodePaths = forNode.map(clean)
  const out = new Set()
  for (const path of forBundlers.map(clean)) {
    const segments = path.split('/').slice(0, -1)
    for (let depth = 1; depth <= segments.length; depth++) {
      const prefix = segments.slice(0, depth).join('/')
      if (nodePaths.some((n) => n === prefix || n.startsWith(`${prefix}/`))) continue
      if (existsSync(join(dir, prefix)) && statSync(join(dir, prefix)).isDirectory()) out.add(prefix)
      break
    }
  }
  if (!out.size) return []
  const elsewhere = sources(dir).filter((f) => ![...out].some((d) => f.startsWith(join(dir, d) + '/')))
  const code = elsewhere.map((f) => readFileSync(f, 'utf8')).join('\n')
  return [...out].filter((d) => !code.includes(`/${d.split('/').pop()}/`))
}
let bundlerOnly = 0
for (const dir of kept) {
  for (const sub of bundlerOnlyDirs(dir)) {
    bundlerOnly += size(join(dir, sub))
    if (!dryRun) rmSync(join(dir, sub), { recursive: true, force: true })
  }
}
const swept = dryRun ? 0 : sweep(root)
const keptTop = topLevel().filter((p) => !drop.includes(p))
process.stdout.write(`prune-deps: ${roots.length} imported, ${keptTop.length} packages kept (${mb(keptTop.reduce((n, p) => n + (statSync(p).isDirectory() ? size(p) : 0), 0))}), ${drop.length} ${dryRun ? 'would be ' : ''}removed (${mb(freed)}); ${mb(swept)} of type declarations, sources, maps, documents and tests and ${mb(bundlerOnly)} of bundler-only builds removed\n`)
