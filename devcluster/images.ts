// Image import: the pause image made from fetch-kube's build of build/pause, and the three
// product images scripts/images.mjs built with buildah, into containerd's k8s.io namespace.
// An image already imported with the same buildah image id is skipped, so `up` on a running
// cluster imports only what changed.
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CONTAINERD_ROOT, PAUSE_REF, RUN_DIR } from './state.ts'

const runAsync = promisify(execFile)

/** returns image name → ref (the pause image is not among them: the chart never names it) */
export async function importImages(socket: string, binDir: string, log: (m: string) => void): Promise<Record<string, string>> {
  // a plain .mjs build script without types: what it exports is used as documented there
  const { IMAGE_NAMES, imageRef, inspectImage } = await import('../scripts/images.mjs' as string)
  if (!inspectImage(PAUSE_REF)) {
    const ctr = execFileSync('buildah', ['from', 'scratch'], { encoding: 'utf8' }).trim()
    execFileSync('buildah', ['copy', '--chmod', '0755', ctr, join(binDir, 'pause'), '/pause'], { stdio: 'ignore' })
    execFileSync('buildah', ['config', '--entrypoint', '["/pause"]', '--user', '65535:65535', ctr], { stdio: 'ignore' })
    execFileSync('buildah', ['commit', '--rm', ctr, PAUSE_REF], { stdio: 'ignore' })
  }
  const refs: Record<string, string> = {}
  for (const [name, ref] of [['pause', PAUSE_REF], ...IMAGE_NAMES.map((n: string) => [n, imageRef(n)])] as [string, string][]) {
    if (name !== 'pause') refs[name] = ref
    await importImage(socket, ref, log)
  }
  return refs
}

/**
 * Imports one image buildah holds into containerd's k8s.io namespace, unless containerd
 * already has it with the same buildah image id. Also how a test brings a previous
 * release's images (another tag) onto the node.
 */
export async function importImage(socket: string, ref: string, log: (m: string) => void): Promise<void> {
  const { inspectImage } = await import('../scripts/images.mjs' as string)
  const stampFile = join(CONTAINERD_ROOT, 'nightjar-imported.json')
  const stamps: Record<string, string> = existsSync(stampFile) ? JSON.parse(readFileSync(stampFile, 'utf8')) : {}
  const id = inspectImage(ref)?.FromImageID as string | undefined
  if (!id) throw new Error(`buildah holds no image ${ref}`)
  const listed = execFileSync('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'ls', '-q'], { encoding: 'utf8' }).split('\n')
  if (stamps[ref] === id && listed.includes(ref)) return
  const started = Date.now()
  const archive = join(RUN_DIR, `${ref.replace(/[^\w.-]+/g, '_')}.tar`)
  await runAsync('buildah', ['push', '--quiet', ref, `docker-archive:${archive}:${ref}`], { maxBuffer: 16 << 20 })
  await runAsync('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'import', archive], { maxBuffer: 16 << 20 })
  rmSync(archive, { force: true })
  // re-read: another import may have written its stamp meanwhile
  const now: Record<string, string> = existsSync(stampFile) ? JSON.parse(readFileSync(stampFile, 'utf8')) : {}
  writeFileSync(stampFile, JSON.stringify({ ...now, [ref]: id }, null, 2))
  log(`imported ${ref} into containerd in ${Math.round((Date.now() - started) / 1000)} s`)
}
