// Seals secrets (credential values, auth-state) under a per-org data key (envelope
// encryption). The AAD names the row a value belongs to, so a sealed value copied to
// another credential, identity, kind or org does not open: a database writer cannot
// swap secrets between rows without the KMS noticing.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { noKmsError, SealError } from './errors.ts'
import type { DataKeyStore, KmsProvider } from './provider.ts'

export interface SealContext {
  orgId: string
  /** What the value is ('credential', 'auth_state', ...): keeps two kinds with equal ids apart. */
  kind: string
  /** The row ids the value belongs to, outermost first (e.g. [identityId, credentialId]). */
  ids: string[]
}

export interface SealerOptions {
  /** How long an unwrapped data key stays in memory (default 5 min; 0 disables the cache). */
  cacheTtlMs?: number
  /** Clock, injectable so the cache expiry is testable without waiting. */
  now?: () => number
}

// Envelope v1: version(1) | nonce(12) | ciphertext(n) | tag(16), base64. The version
// byte lets a later format (new cipher, key rotation id) coexist with stored v1 values.
const V1 = 0x01
const NONCE_BYTES = 12
const TAG_BYTES = 16
const AAD_DOMAIN = Buffer.from('nightjar/seal\0', 'utf8')
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

export class Sealer {
  private readonly ttlMs: number
  private readonly now: () => number
  private readonly cache = new Map<string, { key: KeyObject; expires: number }>()
  private readonly inflight = new Map<string, Promise<KeyObject>>()
  private nextSweep = 0

  private readonly provider: KmsProvider | null
  private readonly keys: DataKeyStore
  constructor(
    provider: KmsProvider | null,
    keys: DataKeyStore,
    opts: SealerOptions = {},
  ) {
    this.provider = provider
    this.keys = keys
    this.ttlMs = opts.cacheTtlMs ?? 5 * 60_000
    this.now = opts.now ?? Date.now
  }

  /** False when no KMS provider is configured: every seal and open then fails closed. */
  get enabled(): boolean {
    return this.provider !== null
  }

  async seal(ctx: SealContext, plaintext: Buffer): Promise<string> {
    if (!this.provider) throw noKmsError()
    checkContext(ctx)
    if (!Buffer.isBuffer(plaintext)) throw new TypeError('seal: plaintext must be a Buffer')
    const key = await this.dataKey(ctx.orgId, true)
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES })
    cipher.setAAD(aad(V1, ctx))
    const ct = Buffer.concat([cipher.update(plaintext), cipher.final()])
    return Buffer.concat([Buffer.of(V1), nonce, ct, cipher.getAuthTag()]).toString('base64')
  }

  /** Returns the plaintext in a Buffer the caller owns and must zero after use. */
  async open(ctx: SealContext, sealed: string): Promise<Buffer> {
    if (!this.provider) throw noKmsError()
    checkContext(ctx)
    const env = parse(sealed)
    const key = await this.dataKey(ctx.orgId, false)
    const decipher = createDecipheriv('aes-256-gcm', key, env.nonce, { authTagLength: TAG_BYTES })
    decipher.setAAD(aad(env.version, ctx))
    decipher.setAuthTag(env.tag)
    const out = decipher.update(env.ct)
    try {
      decipher.final()
    } catch {
      out.fill(0) // update() already produced unauthenticated plaintext: wipe it
      throw new SealError('open_failed')
    }
    return out
  }

  /** Drops every cached data key (e.g. on shutdown or after a key-store restore). */
  clearCache(): void {
    this.cache.clear()
  }

  private dataKey(orgId: string, create: boolean): Promise<KeyObject> | KeyObject {
    const now = this.now()
    const hit = this.cache.get(orgId)
    if (hit && hit.expires > now) return hit.key
    if (hit) this.cache.delete(orgId)
    this.sweep(now)
    // One load per org at a time in this process; across replicas putIfAbsent decides.
    // Opens and seals load separately: an open must never create a key, and a seal
    // must not inherit an open's "no key yet" failure.
    const slot = `${create ? 'c' : 'o'}:${orgId}`
    let p = this.inflight.get(slot)
    if (!p) {
      p = this.load(orgId, create).finally(() => this.inflight.delete(slot))
      this.inflight.set(slot, p)
    }
    return p
  }

  private async load(orgId: string, create: boolean): Promise<KeyObject> {
    const provider = this.provider!
    let wrapped = await this.keys.get(orgId)
    if (!wrapped) {
      if (!create) throw new SealError('no_data_key')
      const fresh = await provider.generateDataKey(orgId)
      let winner: Buffer
      try {
        winner = await this.keys.putIfAbsent(orgId, fresh.wrapped)
      } catch (e) {
        fresh.plaintext.fill(0)
        throw e
      }
      if (winner.equals(fresh.wrapped)) return this.remember(orgId, fresh.plaintext)
      // Another replica stored its key first: ours was never used, use theirs.
      fresh.plaintext.fill(0)
      wrapped = winner
    }
    return this.remember(orgId, await provider.decryptDataKey(orgId, wrapped))
  }

  /** Turns the raw key into a KeyObject (its own copy) and wipes the raw bytes. */
  private remember(orgId: string, raw: Buffer): KeyObject {
    let key: KeyObject
    try {
      key = createSecretKey(raw)
    } finally {
      raw.fill(0)
    }
    // KeyObjects are immutable, so an eviction can never pull a key out from under a
    // seal that is still using it (zeroing a shared Buffer could).
    if (this.ttlMs > 0) this.cache.set(orgId, { key, expires: this.now() + this.ttlMs })
    return key
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return
    this.nextSweep = now + Math.max(this.ttlMs, 1000)
    for (const [org, e] of this.cache) if (e.expires <= now) this.cache.delete(org)
  }
}

function checkContext(ctx: SealContext): void {
  const ok = (s: unknown) => typeof s === 'string' && s.length > 0
  if (!ctx || !ok(ctx.orgId) || !ok(ctx.kind) || !Array.isArray(ctx.ids) || !ctx.ids.every(ok)) {
    throw new TypeError('seal context needs a non-empty orgId, kind and string ids')
  }
}

/**
 * Canonical AAD: domain, version, field count, then each field length-prefixed
 * (orgId, kind, ...ids). Length prefixes keep ['ab','c'] and ['a','bc'] distinct.
 */
function aad(version: number, ctx: SealContext): Buffer {
  const fields = [ctx.orgId, ctx.kind, ...ctx.ids]
  const parts: Buffer[] = [AAD_DOMAIN, Buffer.of(version), u32(fields.length)]
  for (const f of fields) {
    const b = Buffer.from(f, 'utf8')
    parts.push(u32(b.length), b)
  }
  return Buffer.concat(parts)
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}

function parse(sealed: string): { version: number; nonce: Buffer; ct: Buffer; tag: Buffer } {
  if (typeof sealed !== 'string' || !BASE64.test(sealed)) throw new SealError('bad_envelope')
  const buf = Buffer.from(sealed, 'base64')
  if (buf.length < 1 + NONCE_BYTES + TAG_BYTES || buf[0] !== V1) throw new SealError('bad_envelope')
  return {
    version: buf[0],
    nonce: buf.subarray(1, 1 + NONCE_BYTES),
    ct: buf.subarray(1 + NONCE_BYTES, buf.length - TAG_BYTES),
    tag: buf.subarray(buf.length - TAG_BYTES),
  }
}
