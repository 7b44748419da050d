#!/usr/bin/env node
// Builds the four images from docker/*.Dockerfile with buildah on a Node 24 base made here
// (debootstrap + pinned Node and npm), as a platform team without Docker Hub would. An image
// whose input-digest label matches is not rebuilt; the machine's CA bundle is mounted into
// RUN steps only, never a layer. Needs root, buildah, runc, debootstrap, strip (binutils). Recipe: docs/cluster.md#how-the-binaries-are-built
//   node scripts/images.mjs [api-server|operator|browser-pod|browser-pod-cloak …]   (default: all)
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { NODE_PIN, ensurePinnedNode } from './node24.mjs'
import { IMAGE_NAMES, REGISTRY, TAG, imageRef, inspectImage } from '../docker/image-refs.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const say = (msg) => process.stderr.write(`images: ${msg}\n`)
const fail = (why) => {
  say(why)
  process.exit(1)
}
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts })
const have = (cmd) => run('sh', ['-c', `command -v ${cmd}`]).status === 0
const sha256 = (data) => createHash('sha256').update(data).digest('hex')

export { IMAGE_NAMES, REGISTRY, TAG, imageRef, inspectImage }
/** images built FROM another of ours (its BROWSER_POD_IMAGE build arg): that one is built first */
const BUILT_ON = { 'browser-pod-cloak': 'browser-pod' }

const NPM_PIN = { version: '11.21.2', integrity: 'sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A==' }
const MIRROR = 'http://deb.debian.org/debian'
// bookworm-updates and -security too: the browser-pod image gets Chromium's security builds
const APT_SOURCES = [
  `deb ${MIRROR} bookworm main`,
  `deb ${MIRROR} bookworm-updates main`,
  'deb http://deb.debian.org/debian-security bookworm-security main',
]
// what Docker's *-slim images leave out of every package installed later (licences stay)
const DPKG_SLIM = [
  'path-exclude /usr/share/doc/*',
  'path-include /usr/share/doc/*/copyright',
  'path-exclude /usr/share/man/*',
  'path-exclude /usr/share/info/*',
  'path-exclude /usr/share/locale/*',
  'path-include /usr/share/locale/locale.alias',
  'path-exclude /usr/share/lintian/*',
]
// what Debian's official container images set for apt (debuerreotype's docker-clean and
// friends): no .deb archives or package caches kept after an install — without it every
// `apt-get install` in a Dockerfile leaves 80 MB in /var/cache/apt — and no translations
const APT_CLEAN = {
  'docker-clean': [
    'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };',
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };',
    'Dir::Cache::pkgcache "";',
    'Dir::Cache::srcpkgcache "";',
  ],
  'docker-no-languages': ['Acquire::Languages "none";'],
  'docker-gzip-indexes': ['Acquire::GzipIndexes "true";'],
  'docker-autoremove-suggests': ['Apt::AutoRemove::SuggestsImportant "false";'],
}
/** the base image's recipe: any change makes a new base (and so rebuilds the images) */
const BASE_RECIPE = { suite: 'bookworm', variant: 'minbase', node: NODE_PIN, npm: NPM_PIN, apt: APT_SOURCES, slim: DPKG_SLIM, aptClean: APT_CLEAN, stripNode: true, v: 1 }
export const baseRef = `${REGISTRY}/nightjar-node-base:${NODE_PIN.version}-${sha256(JSON.stringify(BASE_RECIPE)).slice(0, 12)}`
/** the same root filesystem before Node and npm: the Dockerfiles' RUNTIME_IMAGE (their run stage copies Node's binary in) */
export const debianRef = `${REGISTRY}/nightjar-debian-base:bookworm-${sha256(JSON.stringify(BASE_RECIPE)).slice(0, 12)}`
const cacheRoot = join(process.env.NIGHTJAR_IMAGES_CACHE || join(homedir(), '.cache', 'nightjar', 'images'))
const INPUTS_LABEL = 'dev.nightjar.inputs'

function ensureTools() {
  const missing = [['buildah', 'buildah'], ['runc', 'runc'], ['debootstrap', 'debootstrap'], ['strip', 'binutils']].filter(([cmd]) => !have(cmd)).map(([, pkg]) => pkg)
  if (!missing.length) return
  if (process.getuid?.() !== 0 || !have('apt-get')) fail(`missing ${missing.join(', ')}; install them with: sudo apt-get install -y ${missing.join(' ')}`)
  say(`installing ${missing.join(', ')} with apt-get…`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  run('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  const r = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) fail(`apt-get install ${missing.join(' ')} failed`)
}

/** `npm pack` one pinned package into dir and check it against the pin; returns the tarball */
function packPinned(name, pin, dir) {
  const r = run('npm', ['pack', `${name}@${pin.version}`, '--silent'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
  const tgz = join(dir, `${name}-${pin.version}.tgz`)
  if (r.status !== 0 || !existsSync(tgz)) fail(`npm pack ${name}@${pin.version} failed`)
  const [algo, want] = pin.integrity.split('-')
  if (createHash(algo).update(readFileSync(tgz)).digest('base64') !== want) fail(`${name}-${pin.version}.tgz does not match its pinned ${algo}`)
  return tgz
}

function buildBase() {
  const work = join(cacheRoot, `base-${process.pid}`)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  const rootfs = join(work, 'rootfs')
  try {
    const started = Date.now()
    say(`making the base image ${baseRef}: debootstrap --variant=minbase bookworm (about a minute)…`)
    const d = run('debootstrap', ['--variant=minbase', 'bookworm', rootfs, MIRROR], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (d.status !== 0) fail(`debootstrap failed (exit ${d.status})`)
    writeFileSync(join(rootfs, 'etc/apt/sources.list'), APT_SOURCES.join('\n') + '\n')
    for (const [file, lines] of Object.entries(APT_CLEAN)) writeFileSync(join(rootfs, 'etc/apt/apt.conf.d', file), lines.join('\n') + '\n')
    writeFileSync(join(rootfs, 'etc/dpkg/dpkg.cfg.d/nightjar-slim'), '# like Docker\'s slim images: no docs (licences stay), man pages or locales\n' + DPKG_SLIM.join('\n') + '\n')
    // what debootstrap itself installed, thinned the same way, and no package caches
    for (const dir of ['usr/share/man', 'usr/share/info', 'usr/share/lintian', 'var/cache/apt/archives', 'var/lib/apt/lists']) {
      const abs = join(rootfs, dir)
      if (existsSync(abs)) for (const f of readdirSync(abs)) if (!['partial', 'lock'].includes(f)) rmSync(join(abs, f), { recursive: true, force: true })
    }
    for (const pkg of readdirSync(join(rootfs, 'usr/share/doc'))) {
      const dir = join(rootfs, 'usr/share/doc', pkg)
      if (lstatSync(dir).isDirectory()) for (const f of readdirSync(dir)) if (f !== 'copyright') rmSync(join(dir, f), { recursive: true, force: true })
    }
    for (const f of readdirSync(join(rootfs, 'usr/share/locale'))) if (f !== 'locale.alias') rmSync(join(rootfs, 'usr/share/locale', f), { recursive: true, force: true })
    rmSync(join(rootfs, 'var/cache/apt/pkgcache.bin'), { force: true })
    rmSync(join(rootfs, 'var/cache/apt/srcpkgcache.bin'), { force: true })
    for (const f of readdirSync(join(rootfs, 'var/log'))) rmSync(join(rootfs, 'var/log', f), { recursive: true, force: true })

    commitRootfs(work, rootfs, debianRef, [])
    say(`adding Node ${NODE_PIN.version} and npm ${NPM_PIN.version}…`)
    const node = ensurePinnedNode()
    copyFileSync(node, join(rootfs, 'usr/local/bin/node'))
    // nodejs.org's binary carries its symbol table and some DWARF (18 MB): stripped, as Debian
    // strips its own node. Addons still link: strip keeps the dynamic symbols they resolve.
    if (run('strip', ['--strip-all', join(rootfs, 'usr/local/bin/node')]).status !== 0) fail('strip of Node\'s binary failed')
    chmodSync(join(rootfs, 'usr/local/bin/node'), 0o755)
    mkdirSync(join(rootfs, 'usr/local/share/doc/node'), { recursive: true })
    copyFileSync(join(dirname(dirname(node)), 'LICENSE'), join(rootfs, 'usr/local/share/doc/node/LICENSE'))
    const npmTgz = packPinned('npm', NPM_PIN, work)
    const npmDir = join(rootfs, 'usr/local/lib/node_modules/npm')
    mkdirSync(npmDir, { recursive: true })
    if (run('tar', ['-xzf', npmTgz, '-C', npmDir, '--strip-components=1', '--no-same-owner']).status !== 0) fail('unpacking npm failed')
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'))
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'))

    commitRootfs(work, rootfs, baseRef, ['--env', `NODE_VERSION=${NODE_PIN.version}`, '--cmd', 'node'])
    say(`base image ready in ${Math.round((Date.now() - started) / 1000)} s`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** Packs `rootfs` into an image named `ref` (buildah from scratch), with the recipe's label. */
function commitRootfs(work, rootfs, ref, config) {
  const tar = join(work, 'rootfs.tar')
  if (run('tar', ['-C', rootfs, '--numeric-owner', '-cf', tar, '.']).status !== 0) fail('packing the root filesystem failed')
  const ctr = run('buildah', ['from', 'scratch']).stdout.trim()
  if (!ctr) fail('buildah from scratch failed')
  const steps = [
    ['add', ctr, tar, '/'],
    ['config', '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...config,
      '--label', `dev.nightjar.base-recipe=${sha256(JSON.stringify(BASE_RECIPE))}`, ctr],
    ['commit', '--rm', ctr, ref],
  ]
  for (const step of steps) {
    const r = run('buildah', step, { stdio: ['ignore', 'ignore', 'inherit'] })
    if (r.status !== 0) fail(`buildah ${step[0]} failed for ${ref}`)
  }
  rmSync(tar, { force: true })
}

/** what the image's .dockerignore allowlist lets into the build context, as sorted paths */
function contextFiles(name) {
  const ignore = readFileSync(join(root, `docker/${name}.Dockerfile.dockerignore`), 'utf8').split('\n').map((l) => l.trim())
  const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1))
  const never = (p) => /(^|\/)node_modules(\/|$)/.test(p) || /\.(log|pem|key)$/.test(p) || /(^|\/)\.env$/.test(p)
  const out = []
  const walk = (rel) => {
    if (never(rel)) return
    const abs = join(root, rel)
    if (!existsSync(abs)) return
    if (lstatSync(abs).isDirectory()) for (const f of readdirSync(abs)) walk(`${rel}/${f}`)
    else out.push(rel)
  }
  for (const a of allowed) walk(a)
  return out.sort()
}

function inputsDigest(name, baseId) {
  const h = createHash('sha256')
  h.update(`base ${baseId}\n`)
  // built on another of our images: a new one of those makes this one stale too
  if (BUILT_ON[name]) h.update(`on ${inspectImage(imageRef(BUILT_ON[name])).FromImageID}\n`)
  for (const f of [`docker/${name}.Dockerfile`, `docker/${name}.Dockerfile.dockerignore`, ...contextFiles(name)]) {
    h.update(`${f}\n`)
    h.update(readFileSync(join(root, f)))
  }
  return h.digest('hex')
}

/** the machine's CA bundle, for build steps only */
function caBundle() {
  const npmCafile = run('npm', ['config', 'get', 'cafile']).stdout?.trim()
  for (const f of [process.env.NODE_EXTRA_CA_CERTS, npmCafile !== 'null' ? npmCafile : undefined, '/etc/ssl/certs/ca-certificates.crt']) if (f && existsSync(f)) return f
  return undefined
}

function buildImage(name, digest) {
  const started = Date.now()
  say(`building ${imageRef(name)} from docker/${name}.Dockerfile…`)
  const mounts = []
  const bundle = caBundle()
  if (bundle) {
    const npmrc = join(cacheRoot, 'build-npmrc')
    writeFileSync(npmrc, '# mounted into build steps only (scripts/images.mjs)\ncafile=/run/nightjar-build/ca.crt\n')
    mounts.push('-v', `${bundle}:/run/nightjar-build/ca.crt:ro`, '-v', `${npmrc}:/usr/local/etc/npmrc:ro`)
  }
  const r = spawnSync('buildah', [
    'build', '--layers', '--network', 'host',
    '-f', `docker/${name}.Dockerfile`, '--ignorefile', `docker/${name}.Dockerfile.dockerignore`,
    ...(BUILT_ON[name] ? ['--build-arg', `BROWSER_POD_IMAGE=${imageRef(BUILT_ON[name])}`] : ['--build-arg', `NODE_IMAGE=${baseRef}`, '--build-arg', `RUNTIME_IMAGE=${debianRef}`]),
    ...mounts,
    '--label', `${INPUTS_LABEL}=${digest}`, '-t', imageRef(name), '.',
  ], { cwd: root, stdio: ['ignore', 2, 2] })
  if (r.status !== 0) fail(`buildah build of ${name} failed (exit ${r.status})`)
  say(`built ${imageRef(name)} in ${Math.round((Date.now() - started) / 1000)} s`)
}

/** size of an image's layers as buildah reports it ("543 MB"; decimal units, like podman) */
export function imageSize(ref) {
  const r = run('buildah', ['images', '--json', ref])
  const m = r.status === 0 ? /^([\d.]+)\s*([kMG]?B)$/.exec(JSON.parse(r.stdout)[0]?.size ?? '') : null
  return m ? Math.round(Number(m[1]) * { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 }[m[2]]) : undefined
}

/**
 * Builds what is missing or stale; returns { name: { ref, id, size } }. A no-op (a few
 * hundred milliseconds of hashing) when every image's inputs are unchanged.
 */
export function ensureImages(names = IMAGE_NAMES) {
  if (process.platform !== 'linux') fail('the images build on Linux only')
  if (process.getuid?.() !== 0) fail('building the images needs root (buildah with its default storage, debootstrap)')
  ensureTools()
  mkdirSync(cacheRoot, { recursive: true })
  if (!inspectImage(baseRef) || !inspectImage(debianRef)) {
    buildBase()
    // earlier bases (another recipe) only hold disk now: their images are rebuilt below
    const others = run('buildah', ['images', '--format', '{{.Name}}:{{.Tag}}', `${REGISTRY}/nightjar-node-base`]).stdout.split('\n').filter((r) => r && r !== baseRef)
    for (const ref of others) run('buildah', ['rmi', ref])
  }
  const baseId = `${inspectImage(baseRef).FromImageID} ${inspectImage(debianRef).FromImageID}`
  // in IMAGE_NAMES order, with what an image is built on before it
  const wanted = IMAGE_NAMES.filter((n) => names.includes(n) || names.some((m) => BUILT_ON[m] === n))
  const replaced = []
  const out = {}
  for (const name of wanted) {
    const digest = inputsDigest(name, baseId)
    const have = inspectImage(imageRef(name))
    if (have?.OCIv1?.config?.Labels?.[INPUTS_LABEL] === digest) say(`${imageRef(name)} is up to date`)
    else {
      buildImage(name, digest)
      if (have?.FromImageID && have.FromImageID !== inspectImage(imageRef(name))?.FromImageID) replaced.unshift(have.FromImageID)
    }
    const img = inspectImage(imageRef(name))
    if (names.includes(name)) out[name] = { ref: imageRef(name), id: img.FromImageID, size: imageSize(imageRef(name)) }
  }
  // the images these replaced, now untagged; an image built on another goes first, as buildah
  // keeps a parent while its child is there (and refuses while a container uses one)
  for (const id of replaced) run('buildah', ['rmi', id])
  return out
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2)
  for (const n of names) if (!IMAGE_NAMES.includes(n)) fail(`no image ${n}; the images are ${IMAGE_NAMES.join(', ')}`)
  const built = ensureImages(names.length ? names : IMAGE_NAMES)
  for (const [name, { ref, size }] of Object.entries(built)) process.stdout.write(`${name}\t${ref}\t${size === undefined ? '?' : `${Math.round(size / 1e6)} MB`}\n`)
}
