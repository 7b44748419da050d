// The browser pod's variables are NIGHTJAR_POD_*; the NIGHTJAR_NODE_* names they had are
// read for one release, with a warning that names the variable and never its value.
import { run } from '../helpers/process.ts'
import t from 'tap'
import { adoptOldPodVariables } from '../../browser-pod/sandbox.ts'

const ROOT = new URL('../../', import.meta.url)
const SECRET = 'tok-must-not-be-printed-4711'

t.test('[ISSUE-48] an old NIGHTJAR_NODE_* variable is moved to its NIGHTJAR_POD_* name, the old one removed, with a warning by name only', async (t) => {
  const warnings: string[] = []
  const env: NodeJS.ProcessEnv = { NIGHTJAR_NODE_TOKEN: SECRET, NIGHTJAR_NODE_HOST: '0.0.0.0', NIGHTJAR_NODE_PORT: '9000', NIGHTJAR_NODE_WATCH: 'false' }
  adoptOldPodVariables(env, (line) => warnings.push(line))
  t.ok(env.NIGHTJAR_POD_TOKEN === SECRET, 'the token under its new name')
  t.same(
    { host: env.NIGHTJAR_POD_HOST, port: env.NIGHTJAR_POD_PORT },
    { host: '0.0.0.0', port: '9000' },
  )
  t.same(Object.keys(env).filter((k) => k.startsWith('NIGHTJAR_NODE_')), ['NIGHTJAR_NODE_WATCH'], 'no old pod name left (no second copy of the token); a node\'s variable is not the pod\'s')
  t.equal(warnings.length, 3, 'one line per old name')
  t.match(warnings[0], /NIGHTJAR_NODE_TOKEN is deprecated .* set NIGHTJAR_POD_TOKEN/)
  t.ok(warnings.every((w) => !w.includes(SECRET)), 'no value in a warning')

  const both: NodeJS.ProcessEnv = { NIGHTJAR_NODE_PORT: '1', NIGHTJAR_POD_PORT: '2' }
  adoptOldPodVariables(both, () => {})
  t.same(both, { NIGHTJAR_POD_PORT: '2' }, 'the new name wins when both are set')

  const fresh: NodeJS.ProcessEnv = { NIGHTJAR_POD_TOKEN: SECRET }
  const none: string[] = []
  adoptOldPodVariables(fresh, (line) => none.push(line))
  t.same(none, [], 'the new names alone: no warning')
})

/** runs the pod with an impossible port, so it stops at its settings, before Chromium */
function podRefusing(vars: Record<string, string>) {
  return run(process.execPath, ['--import', 'tsx', 'browser-pod/main.ts'], { cwd: ROOT, env: { ...process.env, ...vars } })
}

t.test('[ISSUE-48] the pod reads its variables under the new names, and under the old ones for one release with a one-line warning', async (t) => {
  delete process.env.NIGHTJAR_NODE_TOKEN
  delete process.env.NIGHTJAR_POD_TOKEN
  const renamed = await podRefusing({ NIGHTJAR_POD_TOKEN: SECRET, NIGHTJAR_POD_PORT: '99999' })
  t.equal(renamed.code, 2)
  t.match(renamed.stderr, /NIGHTJAR_POD_PORT must be a port number/, 'the token was found (else it would stop there first) and the port read')
  t.notMatch(renamed.stderr, /deprecated/)

  const old = await podRefusing({ NIGHTJAR_NODE_TOKEN: SECRET, NIGHTJAR_NODE_PORT: '99999' })
  t.equal(old.code, 2)
  t.match(old.stderr, /NIGHTJAR_POD_PORT must be a port number/, 'the old names are read: the token found, the port checked')
  t.equal(old.stderr.match(/NIGHTJAR_NODE_TOKEN is deprecated/g)?.length, 1, 'one warning line for the token, even across the pod\'s re-exec')
  t.match(old.stderr, /NIGHTJAR_NODE_PORT is deprecated/)
  t.ok(!old.stderr.includes(SECRET) && !old.stdout.includes(SECRET), 'the token is never printed')
})
