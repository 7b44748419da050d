// TOTP credentials, control side: created over REST with kind
// "totp" from an otpauth:// URI or a base32 seed, the code a fill would type is the one
// RFC 6238's test vectors give (SHA-1/256/512, 8 digits, period 30) — through the
// service's own fill preparation, with its clock set to each vector's time — and an
// independent HMAC implementation agrees for other digits and periods. Bad values are
// refused with a 400 that quotes nothing of the value. Seeds and codes are only ever
// checked with booleans, never printed.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { prepareFill } from '../../../api-server/secrets/fill.ts'
import { openCredentialValue } from '../../../api-server/personas/seal.ts'
import { credentialValueToType } from '../../../api-server/personas/totp.ts'
import { base32, totp } from '../../helpers/totp-reference.ts'
import { createGrant, createIdentity, grantBody, HOUR } from './helpers.ts'

// RFC 6238 Appendix B: the seeds are the ASCII digits repeated to the hash's size.
const SEEDS = {
  SHA1: Buffer.from('12345678901234567890'),
  SHA256: Buffer.from('12345678901234567890123456789012'),
  SHA512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
}
const VECTORS: Array<[number, string, string, string]> = [
  // time (s), SHA1, SHA256, SHA512
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
]

t.test('TOTP credentials', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  const key = acme.apiKey
  const ident = await createIdentity(s, key)
  await createGrant(s, key, ident.id, grantBody(acme.agentId, new Date(Date.now() + HOUR).toISOString()))
  const create = (body: Record<string, unknown>) => s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { originAllowlist: ['login.example.com'], ...body } })
  /**
   * What a fill at `unixSeconds` would type: the stored row opened with the service's
   * sealer and passed through the fill's own hook. (The vectors' times lie decades
   * apart, beyond any grant's life, so the clock is handed to the hook directly;
   * prepareFill itself is exercised at the real time in the last subtest.)
   */
  const typedAt = async (credentialName: string, unixSeconds: number) => {
    const row = (await s.testDb.db.query('select * from credentials where identity_id = $1 and name = $2', [ident.id, credentialName])).rows[0]
    const opened = await openCredentialValue(s.services.sealer, { orgId: row.org_id, identityId: row.identity_id, credentialId: row.id }, row.sealed_value)
    const typed = credentialValueToType({ kind: row.kind }, opened, unixSeconds * 1000)
    const code = typed.toString('utf8')
    typed.fill(0)
    return code
  }

  await t.test('RFC 6238 Appendix B: every vector, SHA-1, SHA-256 and SHA-512, 8 digits', async (t) => {
    for (const [alg, seed] of Object.entries(SEEDS)) {
      const uri = `otpauth://totp/Example:alice@example.com?secret=${base32(seed)}&issuer=Example&algorithm=${alg}&digits=8&period=30`
      const r = await create({ name: `rfc-${alg.toLowerCase()}`, kind: 'totp', value: uri })
      t.equal(r.status, 201, `${alg} credential created`)
      t.equal(r.body.kind, 'totp')
      t.equal(r.body.maskedValue, '••••••••', 'the mask shows nothing of the seed')
      const column = { SHA1: 1, SHA256: 2, SHA512: 3 }[alg as 'SHA1']
      let matches = 0
      for (const v of VECTORS) if ((await typedAt(`rfc-${alg.toLowerCase()}`, v[0])) === v[column]) matches++
      t.equal(matches, VECTORS.length, `${alg}: the typed code matches all ${VECTORS.length} vectors`)
    }
  })

  await t.test('a bare base32 seed (spaced, lower case, padded as services print it) means SHA-1, 6 digits, 30 s', async (t) => {
    const seed = randomBytes(20)
    const printed = base32(seed).toLowerCase().replace(/(.{4})/g, '$1 ').trim() + '===='
    const r = await create({ name: 'bare-seed', kind: 'totp', value: printed })
    t.equal(r.status, 201)
    t.equal(r.body.maskedValue, '••••••••')
    let agree = 0
    const times = [59, 1_700_000_000, 1_700_000_029, 1_700_000_030, 2_000_000_000]
    for (const at of times) if ((await typedAt('bare-seed', at)) === totp(seed, at)) agree++
    t.equal(agree, times.length, 'the independent implementation agrees at every time')
  })

  await t.test('digits and period from the URI are honoured (6-10 digits, any period)', async (t) => {
    const seed = randomBytes(32)
    const cases = [
      { digits: 6, period: 60, algorithm: 'sha256' as const },
      { digits: 7, period: 15, algorithm: 'sha1' as const },
      { digits: 10, period: 45, algorithm: 'sha512' as const },
    ]
    for (const [i, c] of cases.entries()) {
      const r = await create({ name: `shape-${i}`, kind: 'totp', value: `otpauth://totp/acct-${i}?secret=${base32(seed)}&algorithm=${c.algorithm.toUpperCase()}&digits=${c.digits}&period=${c.period}` })
      t.equal(r.status, 201)
      let agree = 0
      const times = [0, c.period - 1, c.period, 1_234_567_890, 1_234_567_890 + c.period]
      for (const at of times) {
        const code = await typedAt(`shape-${i}`, at)
        if (code.length === c.digits && code === totp(seed, at, c)) agree++
      }
      t.equal(agree, times.length, `${c.digits} digits, ${c.period} s, ${c.algorithm}: every code agrees`)
    }
  })

  await t.test('a rotation keeps the kind and re-seals the new seed', async (t) => {
    const [a, b] = [randomBytes(20), randomBytes(20)]
    const r = await create({ name: 'rotating', kind: 'totp', value: base32(a) })
    const before = await typedAt('rotating', 1_500_000_000)
    const rot = await s.request('POST', `/v1/identities/${ident.id}/credentials/${r.body.id}/rotate`, { token: key, body: { value: `otpauth://totp/x?secret=${base32(b)}` } })
    t.equal(rot.status, 200)
    t.equal(rot.body.kind, 'totp')
    t.equal(rot.body.maskedValue, '••••••••')
    t.ok(before === totp(a, 1_500_000_000) && (await typedAt('rotating', 1_500_000_000)) === totp(b, 1_500_000_000), 'the old seed before, the new after')
    const bad = await s.request('POST', `/v1/identities/${ident.id}/credentials/${r.body.id}/rotate`, { token: key, body: { value: 'hunter2 is not base32!' } })
    t.equal(bad.status, 400, 'a rotation to a value that is no TOTP seed is refused')
  })

  await t.test('a password stays a password: kind defaults to password, the mask keeps its last 4', async (t) => {
    const r = await create({ name: 'plain', value: 'correct-horse-battery' })
    t.equal(r.status, 201)
    t.equal(r.body.kind, 'password')
    t.equal(r.body.maskedValue, '••••••••tery')
    t.equal(await typedAt('plain', 59), 'correct-horse-battery', 'a password is typed as stored, whatever the clock')
  })

  await t.test('malformed TOTP values: 400, nothing of the value in the answer, nothing stored', async (t) => {
    const secretish = 'ZZZQ' + base32(randomBytes(20)).slice(4)
    const cases: Record<string, string> = {
      'not base32': 'abc!' + secretish.slice(4),
      'seed too short (64 bits)': base32(randomBytes(8)),
      'hotp URI': `otpauth://hotp/x?secret=${secretish}&counter=1`,
      'URI without a secret': 'otpauth://totp/x?issuer=Example',
      'unknown algorithm': `otpauth://totp/x?secret=${secretish}&algorithm=MD5`,
      'SHA3 is not in RFC 6238': `otpauth://totp/x?secret=${secretish}&algorithm=SHA3-256`,
      '5 digits': `otpauth://totp/x?secret=${secretish}&digits=5`,
      '11 digits': `otpauth://totp/x?secret=${secretish}&digits=11`,
      'period 0': `otpauth://totp/x?secret=${secretish}&period=0`,
      'period of an hour': `otpauth://totp/x?secret=${secretish}&period=3600`,
      'not otpauth': `https://example.com/?secret=${secretish}`,
    }
    const before = (await s.testDb.db.query('select count(*)::int as n from credentials')).rows[0].n
    for (const [why, value] of Object.entries(cases)) {
      const r = await create({ name: 'bad-totp', kind: 'totp', value })
      t.equal(r.status, 400, why)
      t.match(r.body.error?.message, /^invalid request: value: a totp credential takes an otpauth:\/\/totp\/ URI or a base32 seed; /, `${why}: says what is expected`)
      t.ok(!r.text.includes(secretish.slice(4, 20)) && !r.text.includes(value), `${why}: the answer quotes nothing of the value`)
    }
    const unknownKind = await create({ name: 'bad-kind', kind: 'hotp', value: secretish })
    t.equal(unknownKind.status, 400, 'an unknown kind is refused by the schema')
    t.equal((await s.testDb.db.query('select count(*)::int as n from credentials')).rows[0].n, before, 'nothing was stored')
    t.ok(!s.logs().includes(secretish.slice(4, 20)), 'no log line holds any of it')
  })

  await t.test('credential_list shows the kind; fill preparation types the current code; no table holds seed or code', async (t) => {
    const seed = randomBytes(20)
    await create({ name: 'listed', kind: 'totp', value: base32(seed) })
    const p = await prepareFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, credentialName: 'listed' })
    const now = Math.floor(Date.now() / 1000)
    const typed = p.secret.toString('utf8')
    p.secret.fill(0)
    t.ok(typed === totp(seed, now) || typed === totp(seed, now - 1), 'prepareFill hands over the current code (the step of now)')
    const list = await s.request('GET', `/v1/identities/${ident.id}/credentials`, { token: key })
    const row = list.body.find((c: any) => c.name === 'listed')
    t.equal(row.kind, 'totp')
    const dump = JSON.stringify((await s.testDb.db.query('select * from credentials')).rows) + JSON.stringify((await s.testDb.db.query('select * from audit_events')).rows)
    const code = totp(seed, Math.floor(Date.now() / 1000))
    t.ok(!dump.includes(base32(seed)) && !dump.includes(base32(seed).slice(0, 16)) && !dump.includes(seed.toString('hex')), 'no seed in the credentials or audit tables')
    t.ok(!list.text.includes(base32(seed).slice(0, 16)) && !list.text.includes(code), 'no seed or code in the listing')
  })
})
