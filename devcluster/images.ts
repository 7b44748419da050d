// Image import: the pause image made from fetch-kube's build of build/pause, and the four
// product images scripts/images.mjs built with buildah (named in docker/image-refs.mjs), into
// every node's containerd (k8s.io namespace). An image a containerd already holds with the same buildah image id is skipped,
// so `up` on a running cluster imports only what changed.
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { IMAGE_NAMES, imageRef, inspectImage } from '../docker/image-refs.mjs'
import { PAUSE_REF, RUN_DIR } from './state.ts'

const runAsync = promisify(execFile)

/** one node's containerd: its socket and its image store (where the import stamps are kept) */
export interface ContainerdTarget {
  containerdSocket: string
  containerdRoot: string
}

/** returns image name → ref (the pause image is not among them: the chart never names it) */
export async function importImages(targets: ContainerdTarget[], binDir: string, log: (m: string) => void): Promise<Record<string, string>> {
  if (!inspectImage(PAUSE_REF)) {
    const ctr = execFileSync('buildah', ['from', 'scratch'], { encoding: 'utf8' }).trim()
    execFileSync('buildah', ['copy', '--chmod', '0755', ctr, join(binDir, 'pause'), '/pause'], { stdio: 'ignore' })
    execFileSync('buildah', ['config', '--entrypoint', '["/pause"]', '--user', '65535:65535', ctr], { stdio: 'ignore' })
    execFileSync('buildah', ['commit', '--rm', ctr, PAUSE_REF], { stdio: 'ignore' })
  }
  const refs: Record<string, string> = {}
  for (const [name, ref] of [['pause', PAUSE_REF], ...IMAGE_NAMES.map((n) => [n, imageRef(n)])] as [string, string][]) {
    if (name !== 'pause') refs[name] = ref
    await importImage(targets, ref, log)
  }
  return refs
}

/**
 * Imports one image buildah holds into each containerd's k8s.io namespace that does not
 * already have it with the same buildah image id (one archive for them all). Also how a test
 * brings a previous release's images (another tag) onto the nodes.
 */
export async function importImage(targets: ContainerdTarget[], ref: string, log: (m: string) => void): Promise<void> {
  const id = inspectImage(ref)?.FromImageID
  if (!id) throw new Error(`buildah holds no image ${ref}`)
  const stampFile = (t: ContainerdTarget) => join(t.containerdRoot, 'nightjar-imported.json')
  const stamps = (t: ContainerdTarget): Record<string, string> => (existsSync(stampFile(t)) ? JSON.parse(readFileSync(stampFile(t), 'utf8')) : {})
  const missing = targets.filter((t) => {
    const listed = execFileSync('ctr', ['--address', t.containerdSocket, '-n', 'k8s.io', 'images', 'ls', '-q'], { encoding: 'utf8' }).split('\n')
    return stamps(t)[ref] !== id || !listed.includes(ref)
  })
  if (!missing.length) return
  const started = Date.now()
  const archive = join(RUN_DIR, `${ref.replace(/[^\w.-]+/g, '_')}.tar`)
  await runAsync('buildah', ['push', '--quiet', ref, `docker-archive:${archive}:${ref}`], { maxBuffer: 16 << 20 })
  try {
    for (const t of missing) {
      await runAsync('ctr', ['--address', t.containerdSocket, '-n', 'k8s.io', 'images', 'import', archive], { maxBuffer: 16 << 20 })
      // re-read: another import may have written its stamp meanwhile
      writeFileSync(stampFile(t), JSON.stringify({ ...stamps(t), [ref]: id }, null, 2))
    }
  } finally {
    rmSync(archive, { force: true })
  }
  log(`imported ${ref} into ${missing.length > 1 ? `${missing.length} containerds` : 'containerd'} in ${Math.round((Date.now() - started) / 1000)} s`)
}
