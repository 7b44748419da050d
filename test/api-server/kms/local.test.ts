import { chmod, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { KmsConfigError } from '../../../api-server/kms/errors.ts'
import { createKmsProvider } from '../../../api-server/kms/index.ts'
import { LocalKmsProvider } from '../../../api-server/kms/local.ts'
import { failureOf, rejection, tempDir } from './helpers.ts'

t.test('local provider creates the key file 0600 on first use and reuses it across instances', async (t) => {
  const dir = await tempDir(t)
  const keyFile = join(dir, 'nested', 'kms.key')
  const a = new LocalKmsProvider(keyFile)
  t.equal(a.name, 'local')
  const { plaintext, wrapped } = await a.generateDataKey('org_a')
  const st = await stat(keyFile)
  t.equal(st.mode & 0o777, 0o600, 'key file is owner read/write only')
  t.equal(st.size, 32, 'key file holds a 256-bit key')
  t.equal(plaintext.length, 32, 'data key is 256 bits')
  t.notOk(wrapped.includes(plaintext), 'the wrapped form does not contain the plaintext key')
  const before = await readFile(keyFile)

  // a second instance (another process, a restart) reads the same master key
  const b = new LocalKmsProvider(keyFile)
  const unwrapped = await b.decryptDataKey('org_a', wrapped)
  t.ok(unwrapped.equals(plaintext), 'a new instance unwraps a key wrapped by the first')
  t.ok((await readFile(keyFile)).equals(before), 'the existing key file is not rewritten')
})

t.test('local provider: fresh data keys differ per call', async (t) => {
  const p = new LocalKmsProvider(join(await tempDir(t), 'k'))
  const k1 = await p.generateDataKey('org_a')
  const k2 = await p.generateDataKey('org_a')
  t.notOk(k1.plaintext.equals(k2.plaintext), 'two data keys are different')
  t.notOk(k1.wrapped.equals(k2.wrapped), 'two wrapped keys are different')
})

t.test('local provider: instances starting together agree on one key file', async (t) => {
  const keyFile = join(await tempDir(t), 'kms.key')
  const ps = Array.from({ length: 6 }, () => new LocalKmsProvider(keyFile))
  await Promise.all(ps.map((p) => p.ready()))
  const { plaintext, wrapped } = await ps[0].generateDataKey('org_a')
  for (const p of ps.slice(1)) t.ok((await p.decryptDataKey('org_a', wrapped)).equals(plaintext))
  t.equal((await stat(keyFile)).mode & 0o777, 0o600)
})

t.test('local provider: a wrapped key is bound to its org', async (t) => {
  const p = new LocalKmsProvider(join(await tempDir(t), 'k'))
  const { wrapped } = await p.generateDataKey('org_a')
  t.equal(failureOf(await rejection(p.decryptDataKey('org_b', wrapped))), 'key_unwrap_failed')
  const flipped = Buffer.from(wrapped)
  flipped[flipped.length - 20] ^= 1
  t.equal(failureOf(await rejection(p.decryptDataKey('org_a', flipped))), 'key_unwrap_failed', 'tampered wrapped key')
  t.equal(failureOf(await rejection(p.decryptDataKey('org_a', wrapped.subarray(0, 20)))), 'key_unwrap_failed', 'truncated')
})

t.test('local provider: a replaced key file cannot unwrap older data keys', async (t) => {
  const dir = await tempDir(t)
  const { wrapped } = await new LocalKmsProvider(join(dir, 'k1')).generateDataKey('org_a')
  const other = new LocalKmsProvider(join(dir, 'k2'))
  t.equal(failureOf(await rejection(other.decryptDataKey('org_a', wrapped))), 'key_unwrap_failed')
})

t.test('local provider refuses a group- or world-readable key file', async (t) => {
  const dir = await tempDir(t)
  for (const mode of [0o644, 0o640, 0o604, 0o660]) {
    const keyFile = join(dir, `k${mode.toString(8)}`)
    await writeFile(keyFile, randomBytes(32))
    await chmod(keyFile, mode)
    const err = await rejection(new LocalKmsProvider(keyFile).ready())
    t.ok(err instanceof KmsConfigError, `mode ${mode.toString(8)} refused`)
    t.match((err as Error).message, /must not be group- or world-accessible \(chmod 600 it\)/)
    t.match((err as Error).message, new RegExp(`mode ${mode.toString(8)}`))
  }
})

t.test('local provider refuses a key file of the wrong length, and retries once it is fixed', async (t) => {
  const dir = await tempDir(t)
  const keyFile = join(dir, 'k')
  const short = randomBytes(31)
  await writeFile(keyFile, short, { mode: 0o600 })
  const p = new LocalKmsProvider(keyFile)
  const err = await rejection(p.generateDataKey('org_a'))
  t.ok(err instanceof KmsConfigError)
  t.match((err as Error).message, /must hold exactly 32 bytes/)
  t.notOk((err as Error).message.includes(short.toString('base64')), 'message does not echo the file')

  await writeFile(keyFile, randomBytes(33), { mode: 0o600 })
  t.ok((await rejection(p.ready())) instanceof KmsConfigError, '33 bytes refused too')
  await writeFile(keyFile, '', { mode: 0o600 })
  t.ok((await rejection(p.ready())) instanceof KmsConfigError, 'an empty file is refused, not silently regenerated')

  await writeFile(keyFile, randomBytes(32), { mode: 0o600 })
  t.equal(await rejection(p.ready()), 'resolved', 'a corrected file is picked up without a new instance')
})

t.test('local provider accepts a base64 key file (openssl rand -base64 32)', async (t) => {
  const keyFile = join(await tempDir(t), 'k')
  const raw = randomBytes(32)
  await writeFile(keyFile, raw.toString('base64') + '\n', { mode: 0o600 })
  const a = new LocalKmsProvider(keyFile)
  const { plaintext, wrapped } = await a.generateDataKey('org_a')
  // the same key as 32 raw bytes in another file unwraps it: the text was decoded, not used as-is
  const rawFile = keyFile + '.raw'
  await writeFile(rawFile, raw, { mode: 0o600 })
  t.ok((await new LocalKmsProvider(rawFile).decryptDataKey('org_a', wrapped)).equals(plaintext))
})

t.test('local provider refuses a directory as key file', async (t) => {
  const keyFile = join(await tempDir(t), 'k')
  await mkdir(keyFile, { mode: 0o700 })
  const err = await rejection(new LocalKmsProvider(keyFile).ready())
  t.ok(err instanceof KmsConfigError)
  t.match((err as Error).message, /not a regular file/)
})

t.test('createKmsProvider picks the provider from config', async (t) => {
  t.equal(createKmsProvider({ provider: 'none' }), null)
  const local = createKmsProvider({ provider: 'local', keyFile: join(await tempDir(t), 'k') })
  t.equal(local?.name, 'local')
  t.throws(() => createKmsProvider({ provider: 'local' }), KmsConfigError)
  t.throws(() => createKmsProvider({ provider: 'aws' }), KmsConfigError)
  t.throws(() => createKmsProvider({ provider: 'vault' as 'none' }), KmsConfigError)
})

t.test('local provider follows a symlinked key file (mounted secret) and checks the target mode', async (t) => {
  const dir = await tempDir(t)
  const target = join(dir, 'real.key')
  await writeFile(target, randomBytes(32), { mode: 0o400 })
  await symlink(target, join(dir, 'kms.key'))
  t.equal(await rejection(new LocalKmsProvider(join(dir, 'kms.key')).ready()), 'resolved', 'a 0400 target behind a symlink is accepted')
  await chmod(target, 0o644)
  t.ok((await rejection(new LocalKmsProvider(join(dir, 'kms.key')).ready())) instanceof KmsConfigError, 'a 0644 target is refused')
})
