// The aws provider through the real @aws-sdk/client-kms against a wire-level fake.
import t from 'tap'
import { AwsKmsProvider } from '../../../api-server/kms/aws.ts'
import { createKmsProvider } from '../../../api-server/kms/index.ts'
import { Sealer } from '../../../api-server/kms/sealer.ts'
import { startFakeKms, type FakeKms } from './fake-kms-server.ts'
import { failureOf, rejection } from './helpers.ts'
import { CountingProvider, MemoryDataKeyStore } from './memory-store.ts'

// Static, obviously fake credentials: the fake verifies the SigV4 signature made with them.
const CREDS = { accessKeyId: 'AKIANIGHTJARTEST0001', secretAccessKey: 'nightjar-fake-secret-key-for-tests-only' }
const REGION = 'eu-west-1'

let fake: FakeKms
const providers: AwsKmsProvider[] = []
const provider = (over: Partial<ConstructorParameters<typeof AwsKmsProvider>[0]> = {}) => {
  const p = new AwsKmsProvider({ keyId: fake.alias, region: REGION, endpoint: fake.url, credentials: CREDS, ...over })
  providers.push(p)
  return p
}

t.before(async () => {
  fake = await startFakeKms({ ...CREDS, region: REGION })
})
t.teardown(async () => {
  for (const p of providers) p.destroy()
  await fake.close()
})

t.test('aws provider: GenerateDataKey then Decrypt round trip over the wire', async (t) => {
  const p = provider()
  t.equal(p.name, 'aws')
  const before = { ...fake.calls }
  const { plaintext, wrapped } = await p.generateDataKey('norg_a')
  t.equal(plaintext.length, 32, 'AES_256 data key')
  t.notOk(wrapped.includes(plaintext), 'blob does not carry the plaintext key')
  const back = await p.decryptDataKey('norg_a', wrapped)
  t.ok(back.equals(plaintext), 'Decrypt returns the generated key')
  t.equal(fake.calls.GenerateDataKey, (before.GenerateDataKey ?? 0) + 1)
  t.equal(fake.calls.Decrypt, (before.Decrypt ?? 0) + 1)
})

t.test('aws provider: the org is bound as encryption context', async (t) => {
  const p = provider()
  const { wrapped } = await p.generateDataKey('norg_a')
  const rejectedBefore = fake.rejected.length
  const err = await rejection(p.decryptDataKey('norg_b', wrapped))
  t.equal(failureOf(err), 'key_unwrap_failed', 'Decrypt under another org context is refused')
  t.same(fake.rejected.slice(rejectedBefore), ['InvalidCiphertextException'], 'KMS answered InvalidCiphertextException')
  t.equal((err as { cause?: { name?: string } }).cause?.name, 'InvalidCiphertextException', 'the SDK parsed the error body')
  const bad = Buffer.from(wrapped)
  bad[bad.length - 1] ^= 1
  t.equal(failureOf(await rejection(p.decryptDataKey('norg_a', bad))), 'key_unwrap_failed', 'tampered blob')
})

t.test('aws provider: the key id can be the key id, the ARN or the alias', async (t) => {
  const byArn = provider({ keyId: fake.keyArn })
  const byId = provider({ keyId: fake.keyId })
  const { plaintext, wrapped } = await byArn.generateDataKey('norg_a')
  t.ok((await byId.decryptDataKey('norg_a', wrapped)).equals(plaintext))
  const wrongKey = provider({ keyId: 'alias/some-other-key' })
  t.equal(failureOf(await rejection(wrongKey.decryptDataKey('norg_a', wrapped))), 'key_unwrap_failed', 'IncorrectKeyException')
  t.equal(failureOf(await rejection(wrongKey.generateDataKey('norg_a'))), 'kms_unavailable', 'unknown key: NotFoundException')
})

t.test('fake KMS enforces SigV4: unsigned or wrongly signed requests are refused', async (t) => {
  const res = await fetch(fake.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.GenerateDataKey' },
    body: JSON.stringify({ KeyId: fake.alias, KeySpec: 'AES_256' }),
  })
  t.equal(res.status, 400)
  t.equal(((await res.json()) as { __type: string }).__type, 'MissingAuthenticationTokenException')

  const wrongSecret = provider({ credentials: { ...CREDS, secretAccessKey: 'not-the-secret' } })
  const err = await rejection(wrongSecret.generateDataKey('norg_a'))
  t.equal(failureOf(err), 'kms_unavailable')
  t.equal((err as { cause?: { name?: string } }).cause?.name, 'InvalidSignatureException')
  const wrongId = provider({ credentials: { ...CREDS, accessKeyId: 'AKIAUNKNOWN000000000' } })
  t.equal((((await rejection(wrongId.generateDataKey('norg_a'))) as { cause?: { name?: string } }).cause?.name), 'UnrecognizedClientException')
})

t.test('aws provider: a KMS refusal surfaces as kms_unavailable, value-free', async (t) => {
  const p = provider()
  fake.deny = true
  t.teardown(() => {
    fake.deny = false
  })
  const err = await rejection(p.generateDataKey('norg_a'))
  t.equal(failureOf(err), 'kms_unavailable')
  t.equal((err as Error).message, 'KMS provider unavailable')
})

t.test('Sealer over the aws provider: round trip, org binding, one Decrypt per cache period', async (t) => {
  const store = new MemoryDataKeyStore()
  const counting = new CountingProvider(provider())
  const sealer = new Sealer(counting, store)
  const ctx = { orgId: 'norg_a', kind: 'credential', ids: ['nident_1', 'ncred_1'] }
  const secret = Buffer.from('aws-sealed-secret')
  const sealed = await Promise.all([sealer.seal(ctx, secret), sealer.seal(ctx, secret)])
  t.equal(counting.generated, 1, 'one GenerateDataKey for the org')

  const replica = new CountingProvider(provider())
  const other = new Sealer(replica, store)
  for (const s of sealed) {
    const out = await other.open(ctx, s)
    t.ok(out.equals(secret))
    out.fill(0)
  }
  t.equal(replica.decrypted, 1, 'one Decrypt, then the cached key')
  t.equal(failureOf(await rejection(other.open({ ...ctx, ids: ['nident_1', 'ncred_2'] }, sealed[0]))), 'open_failed')

  // a wrapped key copied into another org's row is refused by KMS (encryption context)
  store.rows.set('norg_b', store.rows.get('norg_a')!)
  t.equal(failureOf(await rejection(other.seal({ ...ctx, orgId: 'norg_b' }, secret))), 'key_unwrap_failed')
})

t.test('createKmsProvider builds the aws provider with an endpoint override', async (t) => {
  const p = createKmsProvider({ provider: 'aws', keyId: fake.alias, region: REGION, endpoint: fake.url })
  t.equal(p?.name, 'aws')
  t.ok(p instanceof AwsKmsProvider)
  providers.push(p as AwsKmsProvider)
})
