import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { CONFIG_KEYS, loadConfig, ConfigError } from '../../api-server/config.ts'

t.test('config is validated with one clear line naming the variable', async (t) => {
  t.throws(() => loadConfig({ NIGHTJAR_PORT: 'eighty' }), new ConfigError('invalid configuration: NIGHTJAR_PORT: Invalid input: expected number, received NaN'))
  t.throws(() => loadConfig({ NIGHTJAR_KMS_PROVIDER: 'vault' }), /^invalid configuration: NIGHTJAR_KMS_PROVIDER: /)
  t.throws(() => loadConfig({ NIGHTJAR_KMS_PROVIDER: 'aws' }), /NIGHTJAR_KMS_KEY_ID: required when NIGHTJAR_KMS_PROVIDER=aws/)
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /^invalid configuration: DATABASE_URL: must be a postgres:\/\/ URL$/)
  t.throws(() => loadConfig({ NIGHTJAR_HOST_ALIASES: '[1,2]' }), /NIGHTJAR_HOST_ALIASES: must be a JSON object/)
  const ok = loadConfig({})
  t.equal(ok.port, 8080)
  t.equal(ok.host, '127.0.0.1')
  t.equal(ok.baseUrl, 'http://127.0.0.1:8080')
  t.equal(loadConfig({ NIGHTJAR_BASE_URL: 'https://nj.example.com/' }).baseUrl, 'https://nj.example.com')
})

t.test('a bad value stops start-up with one line naming the variable', async (t) => {
  const r = spawnSync(process.execPath, ['bin/nightjar.mjs', 'start'], { env: { ...process.env, NIGHTJAR_PORT: '99999' }, encoding: 'utf8' })
  t.equal(r.status, 1)
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line')
  t.match(r.stderr, /^nightjar: invalid configuration: NIGHTJAR_PORT: /)
})

t.test('every configuration variable is in the configuration reference (docs/configuration.md)', async (t) => {
  const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
  const undocumented = CONFIG_KEYS.filter((k) => !readme.includes(`| \`${k}\` |`))
  t.same(undocumented, [], 'a knob nobody can find is a knob nobody can use')
})

t.test('the replica address the chart expands from an IPv6 pod IP becomes a URL', async (t) => {
  const secret = 'r'.repeat(32)
  const address = (a: string) => loadConfig({ NIGHTJAR_REPLICA_SECRET: secret, NIGHTJAR_REPLICA_ADDRESS: a }).replica.address
  t.equal(address('http://fd00:10:244::5:8080'), 'http://[fd00:10:244::5]:8080', 'http://$(POD_IP):8080 on an IPv6 cluster')
  t.equal(new URL(address('http://fd00:10:244::5:8080')!).port, '8080')
  t.equal(address('http://[fd00::5]:8080'), 'http://[fd00::5]:8080', 'already bracketed: unchanged')
  t.equal(address('http://10.1.2.3:8080'), 'http://10.1.2.3:8080', 'IPv4: unchanged')
  t.equal(address('https://replica-0.nightjar.svc:8443/'), 'https://replica-0.nightjar.svc:8443', 'a name: unchanged')
  t.throws(() => address('ftp://10.1.2.3:21'), /^invalid configuration: NIGHTJAR_REPLICA_ADDRESS: /, 'still a http(s) URL or refused')
})
