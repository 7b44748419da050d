// The previous release, for the upgrade test: its source from git at the tag's commit
// (pinned here, so a clone without tags still finds it), its images built by its own
// scripts/images.mjs under its own tag and imported onto the node, and its chart and README.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { importImage } from '../../devcluster/images.ts'
import { nodesOf, readState } from '../../devcluster/state.ts'
import { ROOT } from './real-cluster.ts'

export const PREVIOUS_RELEASE = { version: '0.1.0', tag: 'v0.1.0', commit: '1ef46b81f82d15d6677477516bed001dcddcc83b' }
const IMAGES = ['api-server', 'operator', 'browser-pod']

export interface Release {
  version: string
  /** the release's source tree */
  dir: string
  chart: string
  readme: string
}

/** the previous release's tree, images built (once per machine) and imported onto the node */
export async function previousRelease(log: (m: string) => void): Promise<Release> {
  const { version, commit } = PREVIOUS_RELEASE
  const dir = join(homedir(), '.cache', 'nightjar', 'releases', version)
  if (!existsSync(join(dir, '.unpacked'))) {
    if (spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status !== 0) {
      throw new Error(`the previous release's commit ${commit} (${PREVIOUS_RELEASE.tag}) is not in this clone: git fetch --unshallow --tags`)
    }
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${dir}'`], { cwd: ROOT })
    writeFileSync(join(dir, '.unpacked'), `${commit}\n`)
  }
  log(`building (or finding) the images of ${version} from its own Dockerfiles…`)
  const built = spawnSync(process.execPath, [join(dir, 'scripts/images.mjs')], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], timeout: 60 * 60_000 })
  if (built.status !== 0) throw new Error(`building ${version}'s images failed (exit ${built.status})`)
  const state = readState()
  if (!state) throw new Error('the cluster is not up (no state.json)')
  for (const name of IMAGES) await importImage(nodesOf(state), `localhost/nightjar-${name}:${version}`, log)
  return { version, dir, chart: join(dir, 'charts/nightjar'), readme: join(dir, 'README.md') }
}
