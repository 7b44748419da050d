// `npx nightjar` as a user runs it: npm of the machine's own Node (not the Node 24 the tests
// run on), from the checkout, with a fresh npm cache so npm installs the package into its npx
// cache and checks its engines the way a first run does.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The first node on PATH that is not the one running the tests (scripts/node24.mjs puts its own first). */
function machineNode(): string {
  const mine = realpathSync(process.execPath)
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node')
    if (dir && existsSync(candidate) && realpathSync(candidate) !== mine) return candidate
  }
  return process.execPath // the machine's Node is this one
}

t.test('[ISSUE-50] npx nightjar on the machine\'s Node prints no EBADENGINE', async (t) => {
  const node = machineNode()
  const cache = mkdtempSync(join(tmpdir(), 'nightjar-npx-'))
  t.teardown(() => rmSync(cache, { recursive: true, force: true }))
  const bin = dirname(node)
  // npm's shebang finds the first node on PATH: the machine's
  const run = spawnSync('npm', ['exec', '--', 'nightjar', '--help'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, PATH: [bin, process.env.PATH].join(delimiter), npm_config_cache: cache, npm_config_yes: 'true', npm_config_update_notifier: 'false' },
  })
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
  t.equal(run.status, 0, `npm exec nightjar --help exits 0 on Node ${version}`)
  t.match(run.stdout, /nightjar — browser sessions for AI agents/, 'the CLI ran')
  t.notMatch(run.stderr, /EBADENGINE/, 'npm warns about no engine')
})
