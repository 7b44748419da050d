import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ApiError } from '../../../contracts/errors.ts'
import { createKmsProvider } from '../../../api-server/kms/index.ts'
import { LocalKmsProvider } from '../../../api-server/kms/local.ts'
import { Sealer, type SealContext } from '../../../api-server/kms/sealer.ts'
import { CountingProvider, MemoryDataKeyStore } from './memory-store.ts'
import { failureOf, rejection, tempDir } from './helpers.ts'

const SECRET = 'hunter2-correct-horse-battery'
const cred = (orgId: string, identityId = 'nident_1', credentialId = 'ncred_1'): SealContext => ({
  orgId,
  kind: 'credential',
  ids: [identityId, credentialId],
})

async function setup(t: Test, opts: { cacheTtlMs?: number; now?: () => number } = {}) {
  const keyFile = join(await tempDir(t), 'kms.key')
  const provider = new CountingProvider(new LocalKmsProvider(keyFile))
  const store = new MemoryDataKeyStore()
  return { keyFile, provider, store, sealer: new Sealer(provider, store, opts) }
}

/** Opens and compares inside, so the plaintext never reaches an assertion message. */
async function opensTo(sealer: Sealer, ctx: SealContext, sealed: string, expected: string): Promise<boolean> {
  const out = await sealer.open(ctx, sealed)
  const ok = out.equals(Buffer.from(expected, 'utf8'))
  out.fill(0)
  return ok
}

t.test('seal/open round trip', async (t) => {
  const { sealer, store } = await setup(t)
  t.ok(sealer.enabled)
  const sealed = await sealer.seal(cred('norg_a'), Buffer.from(SECRET))
  t.match(sealed, /^[A-Za-z0-9+/]+=*$/, 'sealed form is base64')
  t.equal(Buffer.from(sealed, 'base64')[0], 1, 'envelope starts with version byte 1')
  t.notOk(Buffer.from(sealed, 'base64').includes(Buffer.from(SECRET)), 'no plaintext in the envelope')
  t.ok(await opensTo(sealer, cred('norg_a'), sealed, SECRET))
  t.equal(store.rows.size, 1, 'one data key stored for the org')

  const again = await sealer.seal(cred('norg_a'), Buffer.from(SECRET))
  t.not(again, sealed, 'a random nonce makes every seal different')
  t.ok(await opensTo(sealer, cred('norg_a'), again, SECRET))

  const empty = await sealer.seal(cred('norg_a'), Buffer.alloc(0))
  t.equal((await sealer.open(cred('norg_a'), empty)).length, 0, 'empty plaintext round-trips')

  const big = Buffer.alloc(64 * 1024, 7) // auth-state blobs are larger than passwords
  const out = await sealer.open({ orgId: 'norg_a', kind: 'auth_state', ids: ['nident_1', 'niver_1'] },
    await sealer.seal({ orgId: 'norg_a', kind: 'auth_state', ids: ['nident_1', 'niver_1'] }, big))
  t.ok(out.equals(big))
})

t.test('a restarted sealer (new instance, same key file and store) opens old values', async (t) => {
  const { sealer, store, keyFile } = await setup(t)
  const sealed = await sealer.seal(cred('norg_a'), Buffer.from(SECRET))
  const restarted = new Sealer(new LocalKmsProvider(keyFile), store)
  t.ok(await opensTo(restarted, cred('norg_a'), sealed, SECRET))
})

t.test('ciphertext swap: a sealed value moved to another row, kind or org does not open', async (t) => {
  const { sealer, store } = await setup(t)
  const sealed = await sealer.seal(cred('norg_a', 'nident_1', 'ncred_1'), Buffer.from(SECRET))
  await sealer.seal(cred('norg_b'), Buffer.from('other org secret')) // norg_b has its own data key

  const moves: Array<[string, SealContext]> = [
    ['another credential id', cred('norg_a', 'nident_1', 'ncred_2')],
    ['another identity id', cred('norg_a', 'nident_2', 'ncred_1')],
    ['another kind', { orgId: 'norg_a', kind: 'auth_state', ids: ['nident_1', 'ncred_1'] }],
    ['ids re-split (length-prefixed AAD)', cred('norg_a', 'nident_1n', 'cred_1')],
    ['fewer ids', { orgId: 'norg_a', kind: 'credential', ids: ['nident_1'] }],
    ['another org (own data key)', cred('norg_b', 'nident_1', 'ncred_1')],
  ]
  for (const [what, ctx] of moves) {
    const err = await rejection(sealer.open(ctx, sealed))
    t.equal(failureOf(err), 'open_failed', what)
    t.ok(err instanceof ApiError && err.status === 500 && err.code === 'internal', `${what}: a typed 500`)
    t.notOk(JSON.stringify((err as ApiError).toBody()).includes(SECRET), `${what}: no plaintext in the body`)
    t.notOk(String((err as Error).message).includes(SECRET), `${what}: no plaintext in the message`)
  }

  // an org that never had a data key: fails, and does not get one as a side effect
  t.equal(failureOf(await rejection(sealer.open(cred('norg_c'), sealed))), 'no_data_key')
  t.notOk(store.rows.has('norg_c'), 'opening never creates a data key')
  t.ok(await opensTo(sealer, cred('norg_a'), sealed, SECRET), 'still opens in place')
})

t.test('tampered ciphertext fails to open', async (t) => {
  const { sealer } = await setup(t)
  const ctx = cred('norg_a')
  const sealed = await sealer.seal(ctx, Buffer.from(SECRET))
  const raw = Buffer.from(sealed, 'base64')
  const flip = (i: number) => {
    const b = Buffer.from(raw)
    b[i] ^= 0x01
    return b.toString('base64')
  }
  t.equal(failureOf(await rejection(sealer.open(ctx, flip(0)))), 'bad_envelope', 'version byte')
  t.equal(failureOf(await rejection(sealer.open(ctx, flip(5)))), 'open_failed', 'nonce')
  t.equal(failureOf(await rejection(sealer.open(ctx, flip(14)))), 'open_failed', 'ciphertext')
  t.equal(failureOf(await rejection(sealer.open(ctx, flip(raw.length - 1)))), 'open_failed', 'tag')
  t.equal(failureOf(await rejection(sealer.open(ctx, raw.subarray(0, raw.length - 1).toString('base64')))), 'open_failed', 'truncated')
  t.equal(failureOf(await rejection(sealer.open(ctx, raw.subarray(0, 20).toString('base64')))), 'bad_envelope', 'too short')
  t.equal(failureOf(await rejection(sealer.open(ctx, 'not*base64!'))), 'bad_envelope', 'not base64')
  t.equal(failureOf(await rejection(sealer.open(ctx, ''))), 'bad_envelope', 'empty')
  t.equal(failureOf(await rejection(sealer.open(ctx, SECRET))), 'bad_envelope', 'a plaintext value in the column')
})

t.test('[ERR-20] no KMS provider: seal and open fail closed with the spec 500, nothing stored', async (t) => {
  const store = new MemoryDataKeyStore()
  const provider = createKmsProvider({ provider: 'none' })
  t.equal(provider, null)
  const sealer = new Sealer(provider, store)
  t.equal(sealer.enabled, false)
  for (const [what, p] of [
    ['seal', sealer.seal(cred('norg_a'), Buffer.from(SECRET))],
    ['open', sealer.open(cred('norg_a'), 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')],
  ] as const) {
    const err = await rejection(p)
    t.ok(err instanceof ApiError, `${what}: ApiError`)
    const e = err as ApiError
    t.equal(e.status, 500, `${what}: status`)
    t.equal(e.code, 'internal', `${what}: code`)
    t.equal(e.message, 'credential decryption unavailable: no KMS object store configured', `${what}: message`)
    t.same(e.toBody(), {
      error: { code: 'internal', message: 'credential decryption unavailable: no KMS object store configured' },
    })
  }
  t.equal(store.rows.size, 0, 'no data key stored')
  t.equal(store.puts, 0, 'the store was never written')
})

t.test('context is validated before any KMS work', async (t) => {
  const { sealer, provider } = await setup(t)
  for (const ctx of [
    { orgId: '', kind: 'credential', ids: ['x'] },
    { orgId: 'norg_a', kind: '', ids: ['x'] },
    { orgId: 'norg_a', kind: 'credential', ids: [''] },
    { orgId: 'norg_a', kind: 'credential' } as unknown as SealContext,
  ]) {
    t.ok((await rejection(sealer.seal(ctx, Buffer.from('x')))) instanceof TypeError)
  }
  t.ok((await rejection(sealer.seal(cred('norg_a'), SECRET as unknown as Buffer))) instanceof TypeError, 'plaintext must be a Buffer')
  t.equal(provider.generated, 0)
})

t.test('cache: data keys are unwrapped once per TTL, then again', async (t) => {
  let now = 1_000_000
  const { store, keyFile } = await setup(t)
  const first = new Sealer(new LocalKmsProvider(keyFile), store)
  const sealed = await first.seal(cred('norg_a'), Buffer.from(SECRET))

  const provider = new CountingProvider(new LocalKmsProvider(keyFile))
  const sealer = new Sealer(provider, store, { cacheTtlMs: 1000, now: () => now })
  t.ok(await opensTo(sealer, cred('norg_a'), sealed, SECRET))
  t.equal(provider.decrypted, 1, 'first open unwraps the data key')
  await sealer.open(cred('norg_a'), sealed)
  await sealer.seal(cred('norg_a'), Buffer.from('x'))
  now += 999
  await sealer.open(cred('norg_a'), sealed)
  t.equal(provider.decrypted, 1, 'within the TTL the cached key is used')
  now += 1
  await sealer.open(cred('norg_a'), sealed)
  t.equal(provider.decrypted, 2, 'after the TTL the key is unwrapped again')
  sealer.clearCache()
  await sealer.open(cred('norg_a'), sealed)
  t.equal(provider.decrypted, 3, 'clearCache drops the key')
  t.equal(provider.generated, 0, 'an existing org key is never regenerated')

  const noCache = new CountingProvider(new LocalKmsProvider(keyFile))
  const uncached = new Sealer(noCache, store, { cacheTtlMs: 0 })
  await uncached.open(cred('norg_a'), sealed)
  await uncached.open(cred('norg_a'), sealed)
  t.equal(noCache.decrypted, 2, 'cacheTtlMs 0 disables the cache')

  const dflt = new CountingProvider(new LocalKmsProvider(keyFile))
  let clock = 0
  const byDefault = new Sealer(dflt, store, { now: () => clock })
  await byDefault.open(cred('norg_a'), sealed)
  clock = 5 * 60_000 - 1
  await byDefault.open(cred('norg_a'), sealed)
  t.equal(dflt.decrypted, 1, 'default TTL keeps the key for just under 5 minutes')
  clock = 5 * 60_000
  await byDefault.open(cred('norg_a'), sealed)
  t.equal(dflt.decrypted, 2, 'and drops it at 5 minutes')
})

t.test('concurrent first seals in one process share one data key', async (t) => {
  const { sealer, provider, store } = await setup(t)
  const sealed = await Promise.all(Array.from({ length: 20 }, (_, i) => sealer.seal(cred('norg_a', 'nident_1', `ncred_${i}`), Buffer.from(`${SECRET}${i}`))))
  t.equal(provider.generated, 1, 'one data key generated')
  t.equal(store.puts, 1, 'one store write')
  const fresh = new Sealer(provider, store)
  for (let i = 0; i < sealed.length; i++) t.ok(await opensTo(fresh, cred('norg_a', 'nident_1', `ncred_${i}`), sealed[i], `${SECRET}${i}`))
})

t.test('concurrent first seals on two replicas agree on one data key', async (t) => {
  const { store, keyFile } = await setup(t)
  const pa = new CountingProvider(new LocalKmsProvider(keyFile))
  const pb = new CountingProvider(new LocalKmsProvider(keyFile))
  const a = new Sealer(pa, store)
  const b = new Sealer(pb, store)
  const jobs = Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).seal(cred('norg_a', 'nident_1', `ncred_${i}`), Buffer.from(`${SECRET}${i}`)))
  const sealed = await Promise.all(jobs)
  t.equal(pa.generated + pb.generated, 2, 'both replicas raced to generate')
  t.equal(store.rows.size, 1, 'exactly one data key stored')
  t.equal(pa.decrypted + pb.decrypted, 1, 'the losing replica unwrapped the winner instead of using its own key')
  // every value opens on either replica and on a third, cold one: all used the stored key
  const cold = new Sealer(new LocalKmsProvider(keyFile), store)
  for (let i = 0; i < sealed.length; i++) {
    const ctx = cred('norg_a', 'nident_1', `ncred_${i}`)
    t.ok(await opensTo(a, ctx, sealed[i], `${SECRET}${i}`))
    t.ok(await opensTo(b, ctx, sealed[i], `${SECRET}${i}`))
    t.ok(await opensTo(cold, ctx, sealed[i], `${SECRET}${i}`))
  }
})

t.test('orgs get separate data keys', async (t) => {
  const { sealer, store, provider } = await setup(t)
  await sealer.seal(cred('norg_a'), Buffer.from('a'))
  await sealer.seal(cred('norg_b'), Buffer.from('b'))
  t.equal(provider.generated, 2)
  t.notOk(store.rows.get('norg_a')!.equals(store.rows.get('norg_b')!))
  // a wrapped key copied from one org's row to another's does not unwrap there
  store.rows.set('norg_b', store.rows.get('norg_a')!)
  const fresh = new Sealer(provider, store)
  const err = await rejection(fresh.seal(cred('norg_b'), Buffer.from('b')))
  t.equal(failureOf(err), 'key_unwrap_failed')
})
