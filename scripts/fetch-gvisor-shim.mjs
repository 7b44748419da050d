#!/usr/bin/env node
// Builds containerd-shim-runsc-v1 (pods under gVisor) for the real node of `npm run
// cluster`: Debian ships runsc but no shim, and only Debian's and npm's registries are
// reachable, so it is built from Debian's gVisor source, patched for containerd 1.6.
// Cache: $NIGHTJAR_GVISOR_CACHE; prints the shim's path, or exits 1 with a reason.
// Recipe: docs/cluster.md#how-the-binaries-are-built
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const GVISOR_SOURCE = { name: 'golang-gvisor-gvisor', version: '0.0~20240729.0-4', upstream: '0.0~20240729.0' }
const GO_PACKAGES = ['golang-1.22-go', 'golang-1.22-src']
/** what the shim imports; their dependencies are resolved by apt */
const GO_LIBRARIES = [
  'golang-github-burntsushi-toml-dev', 'golang-github-cenkalti-backoff-dev', 'golang-github-containerd-cgroups-dev',
  'golang-github-containerd-console-dev', 'golang-github-containerd-containerd-dev', 'golang-github-containerd-fifo-dev',
  'golang-github-containerd-go-runc-dev', 'golang-github-containerd-typeurl-dev', 'golang-github-gogo-protobuf-dev',
  'golang-github-google-btree-dev', 'golang-github-mohae-deepcopy-dev', 'golang-github-opencontainers-specs-dev',
  'golang-github-sirupsen-logrus-dev', 'golang-gocapability-dev', 'golang-golang-x-exp-dev', 'golang-golang-x-sys-dev',
  'golang-golang-x-time-dev', 'golang-google-protobuf-dev',
]
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg'
const SOURCES = [
  `deb [signed-by=${KEYRING}] http://deb.debian.org/debian bookworm main`,
  `deb [signed-by=${KEYRING}] http://deb.debian.org/debian bookworm-backports main`,
  `deb-src [signed-by=${KEYRING}] http://deb.debian.org/debian trixie main`,
]
const PATCH = join(dirname(fileURLToPath(import.meta.url)), 'gvisor-shim', 'containerd-1.6-shim-api.patch')

const say = (msg) => process.stderr.write(`fetch-gvisor-shim: ${msg}\n`)
class BuildError extends Error {}
const fail = (why) => { throw new BuildError(why) }
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts })
const have = (cmd) => run('sh', ['-c', `command -v ${cmd}`]).status === 0

const key = createHash('sha256').update([GVISOR_SOURCE.version, ...GO_PACKAGES, ...GO_LIBRARIES, readFileSync(PATCH, 'utf8')].join('\n')).digest('hex').slice(0, 16)
export const cacheRoot = process.env.NIGHTJAR_GVISOR_CACHE || join(homedir(), '.cache', 'nightjar', 'gvisor')
export const shimPath = join(cacheRoot, `shim-${key}`, 'containerd-shim-runsc-v1')

/** apt-get/apt-cache through a private configuration: the machine's sources are never touched */
function privateApt(work) {
  const apt = join(work, 'apt')
  mkdirSync(join(apt, 'lists', 'partial'), { recursive: true })
  mkdirSync(join(apt, 'cache', 'archives', 'partial'), { recursive: true })
  writeFileSync(join(apt, 'sources.list'), SOURCES.join('\n') + '\n')
  const opts = [
    '-o', `Dir::Etc::SourceList=${join(apt, 'sources.list')}`, '-o', 'Dir::Etc::SourceParts=/dev/null',
    '-o', `Dir::State::Lists=${join(apt, 'lists')}`, '-o', `Dir::Cache=${join(apt, 'cache')}`,
    '-o', 'APT::Architecture=amd64', '-o', 'APT::Architectures::=amd64', '-o', 'APT::Sandbox::User=root',
  ]
  say('reading the Debian indexes (bookworm, bookworm-backports, trixie sources)…')
  const upd = run('apt-get', [...opts, 'update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] })
  if (upd.status !== 0) fail('apt-get update of the private index failed')
  return (tool, args, cwd) => run(tool, [...opts, ...args], { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
}

/** the library packages and what apt would install with them, as package names */
function closure(apt, work) {
  // a simulated install on an empty system: apt picks one of each alternative, as it would
  // when installing (following every alternative would unpack two copies of a library)
  const status = join(work, 'apt', 'status')
  writeFileSync(status, '')
  const r = apt('apt-get', ['-o', `Dir::State::status=${status}`, 'install', '-s', '--no-install-recommends', ...GO_LIBRARIES], work)
  if (r.status !== 0) fail('apt-get install -s of the Go libraries failed')
  // Go source packages only: the build is CGO-free, so C libraries and tools are not needed
  return [...r.stdout.matchAll(/^Inst (golang-\S+-dev) /gm)].map((m) => m[1]).sort()
}

function download(apt, work, packages, into) {
  const debs = join(work, 'debs')
  mkdirSync(debs, { recursive: true })
  say(`downloading ${packages.length} packages…`)
  const r = apt('apt-get', ['download', '-qq', ...packages], debs)
  if (r.status !== 0) fail(`apt-get download failed (${packages.length} packages)`)
  mkdirSync(into, { recursive: true })
  for (const deb of readdirSync(debs)) {
    const x = run('dpkg-deb', ['-x', join(debs, deb), into])
    if (x.status !== 0) fail(`dpkg-deb -x ${deb} failed`)
  }
  rmSync(debs, { recursive: true, force: true })
}

/**
 * The source package's tarballs, each checked against the sha256 the signed Sources index
 * gives. Not `apt-get source`: the mirror here serves the tarballs but not the .dsc.
 */
function fetchSource(apt, work) {
  const src = join(work, 'src')
  mkdirSync(src, { recursive: true })
  const show = apt('apt-cache', ['showsrc', GVISOR_SOURCE.name], work)
  if (show.status !== 0) fail(`apt-cache showsrc ${GVISOR_SOURCE.name} failed`)
  const stanza = show.stdout.split(/\n\n+/).find((s) => new RegExp(`^Version: ${GVISOR_SOURCE.version.replace(/[.+~]/g, '\\$&')}$`, 'm').test(s))
  if (!stanza) fail(`trixie no longer has ${GVISOR_SOURCE.name} ${GVISOR_SOURCE.version}: update the pin (and the patch, if the shim changed)`)
  const directory = /^Directory: (\S+)$/m.exec(stanza)?.[1]
  const sums = /^Checksums-Sha256:\n((?: .+\n?)+)/m.exec(stanza)?.[1] ?? ''
  const files = sums.trim().split('\n').map((l) => l.trim().split(/\s+/)).filter(([, , f]) => f && !f.endsWith('.dsc'))
  if (!directory || files.length !== 2) fail('the Sources index entry is not what was expected (an orig and a debian tarball)')
  for (const [sha, , file] of files) {
    say(`downloading ${file}…`)
    const url = `http://deb.debian.org/debian/${directory}/${encodeURIComponent(file)}`
    const get = run('curl', ['-fsSL', '--retry', '3', '-o', join(src, file), url], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (get.status !== 0) fail(`downloading ${url} failed`)
    const got = createHash('sha256').update(readFileSync(join(src, file))).digest('hex')
    if (got !== sha) fail(`sha256 of ${file} is not the signed index's`)
  }
  const tree = join(src, 'tree')
  mkdirSync(tree)
  const orig = files.find(([, , f]) => f.includes('.orig.'))[2]
  const debian = files.find(([, , f]) => f.includes('.debian.'))[2]
  if (run('tar', ['xzf', join(src, orig), '-C', tree, '--strip-components=1']).status !== 0) fail(`unpacking ${orig} failed`)
  if (run('tar', ['xJf', join(src, debian), '-C', tree]).status !== 0) fail(`unpacking ${debian} failed`)
  // Debian's own patches first (what dpkg-source would apply), then ours
  const series = readFileSync(join(tree, 'debian', 'patches', 'series'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  for (const patch of [...series.map((p) => join(tree, 'debian', 'patches', p)), PATCH]) {
    const p = run('patch', ['-p1', '-s', '-i', patch], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] })
    if (p.status !== 0) fail(`${patch} does not apply`)
  }
  return tree
}

function buildVdso(tree) {
  // the same recipe as Debian's rules (and gVisor's vdso/BUILD): runsc embeds this blob
  const out = 'pkg/sentry/loader/vdsodata/vdso_amd64.so'
  const cc = run('g++', [
    '-I.', '-O2', '-std=c++11', '-fPIC', '-fno-sanitize=all', '-fno-stack-protector', '-shared', '-nostdlib',
    '-Wl,-soname=linux-vdso.so.1', '-Wl,--hash-style=sysv', '-Wl,--no-undefined', '-Wl,-Bsymbolic',
    '-Wl,-z,max-page-size=4096', '-Wl,-z,common-page-size=4096', '-Wl,-Tvdso/vdso_amd64.lds',
    '-o', out, 'vdso/vdso.cc', 'vdso/vdso_time.cc',
  ], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] })
  if (cc.status !== 0) fail('building the vDSO failed (g++ is needed)')
  const check = run('python3', ['./vdso/check_vdso.py', '--check-data', `--vdso=${out}`], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] })
  if (check.status !== 0) fail('vdso/check_vdso.py refused the vDSO')
}

function buildShim(work, tree, out) {
  const goroot = join(work, 'go', 'usr', 'lib', 'go-1.22')
  const gopath = join(work, 'gopath')
  mkdirSync(join(gopath, 'src', 'gvisor.dev'), { recursive: true })
  rmSync(join(gopath, 'src', 'gvisor.dev', 'gvisor'), { recursive: true, force: true })
  renameSync(tree, join(gopath, 'src', 'gvisor.dev', 'gvisor'))
  const env = {
    PATH: `${join(goroot, 'bin')}:/usr/bin:/bin`, HOME: work, GOROOT: goroot,
    GOPATH: `${gopath}:${join(work, 'gocode', 'usr', 'share', 'gocode')}:/usr/share/gocode`,
    GOCACHE: join(work, 'gocache'), GO111MODULE: 'off', GOPROXY: 'off', GOTOOLCHAIN: 'local', GOFLAGS: '', CGO_ENABLED: '0',
  }
  say('building containerd-shim-runsc-v1 — about 2 minutes on two cores, once')
  const started = Date.now()
  const r = spawnSync(join(goroot, 'bin', 'go'), ['build', '-p', '2', '-trimpath', '-ldflags=-s -w', '-o', out, './shim'], {
    cwd: join(gopath, 'src', 'gvisor.dev', 'gvisor'), env, stdio: ['ignore', 2, 2],
  })
  if (r.status !== 0) fail(`go build exited ${r.status}`)
  say(`built in ${Math.round((Date.now() - started) / 1000)} s`)
}

/** builds the shim unless the cache holds it; returns its path */
export function ensureGvisorShim() {
  if (existsSync(shimPath)) return shimPath
  if (process.platform !== 'linux') fail(`the gVisor shim builds on Linux only (this is ${process.platform})`)
  for (const tool of ['apt-get', 'curl', 'dpkg-deb', 'patch', 'g++', 'python3']) if (!have(tool)) fail(`${tool} is needed to build the gVisor shim`)
  const work = join(cacheRoot, `work-${key}-${process.pid}`)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  try {
    const apt = privateApt(work)
    download(apt, work, GO_PACKAGES, join(work, 'go'))
    download(apt, work, closure(apt, work), join(work, 'gocode'))
    const tree = fetchSource(apt, work)
    buildVdso(tree)
    const built = join(work, 'containerd-shim-runsc-v1')
    buildShim(work, tree, built)
    mkdirSync(dirname(shimPath), { recursive: true })
    copyFileSync(built, `${shimPath}.tmp`)
    chmodSync(`${shimPath}.tmp`, 0o755)
    renameSync(`${shimPath}.tmp`, shimPath) // atomic: a concurrent run never sees half a binary
    say(`kept ${shimPath}`)
  } finally {
    rmSync(work, { recursive: true, force: true }) // ~800 MB of Go and sources: only the binary is kept
  }
  return shimPath
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(ensureGvisorShim() + '\n')
  } catch (err) {
    if (!(err instanceof BuildError)) throw err
    say(`cannot build the gVisor shim: ${err.message}`)
    process.exit(1)
  }
}
