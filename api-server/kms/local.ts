// `local` provider: a master key in a file wraps the per-org data keys. This is the
// embedded default; it protects sealed values in a database dump that does not
// include the key file, which is what the file's 0600 and separate location are for.
import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, randomUUID, type KeyObject } from 'node:crypto'
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { KmsConfigError, SealError } from './errors.ts'
import { DATA_KEY_BYTES, type KmsProvider } from './provider.ts'

// wrapped = version(1) | keyId(8) | nonce(12) | ciphertext(32) | tag(16)
const WRAP_VERSION = 0x01
const KEY_ID_BYTES = 8
const NONCE_BYTES = 12
const TAG_BYTES = 16
const WRAPPED_BYTES = 1 + KEY_ID_BYTES + NONCE_BYTES + DATA_KEY_BYTES + TAG_BYTES
const AAD_PREFIX = Buffer.from('nightjar/kms-local/v1\0', 'utf8')

export class LocalKmsProvider implements KmsProvider {
  readonly name = 'local' as const
  readonly keyFile: string
  private master?: Promise<{ key: KeyObject; keyId: Buffer }>

  constructor(keyFile: string) {
    if (!keyFile) throw new KmsConfigError('local KMS provider needs a key file path')
    this.keyFile = keyFile
  }

  /** Loads (or creates) the key file now, so a server can fail at start-up, not at first fill. */
  async ready(): Promise<void> {
    await this.load()
  }

  async generateDataKey(orgId: string): Promise<{ plaintext: Buffer; wrapped: Buffer }> {
    const { key, keyId } = await this.load()
    const plaintext = randomBytes(DATA_KEY_BYTES)
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, nonce)
    cipher.setAAD(aad(orgId))
    const ct = Buffer.concat([cipher.update(plaintext), cipher.final()])
    const wrapped = Buffer.concat([Buffer.of(WRAP_VERSION), keyId, nonce, ct, cipher.getAuthTag()])
    return { plaintext, wrapped }
  }

  async decryptDataKey(orgId: string, wrapped: Buffer): Promise<Buffer> {
    const { key, keyId } = await this.load()
    if (wrapped.length !== WRAPPED_BYTES || wrapped[0] !== WRAP_VERSION) throw new SealError('key_unwrap_failed')
    // A key id mismatch means the key file was replaced; fail the same way, but early.
    if (!wrapped.subarray(1, 1 + KEY_ID_BYTES).equals(keyId)) throw new SealError('key_unwrap_failed')
    let o = 1 + KEY_ID_BYTES
    const nonce = wrapped.subarray(o, (o += NONCE_BYTES))
    const ct = wrapped.subarray(o, (o += DATA_KEY_BYTES))
    const tag = wrapped.subarray(o)
    const decipher = createDecipheriv('aes-256-gcm', key, nonce)
    decipher.setAAD(aad(orgId))
    decipher.setAuthTag(tag)
    const out = decipher.update(ct)
    try {
      decipher.final()
    } catch {
      out.fill(0) // unauthenticated output must not outlive the failure
      throw new SealError('key_unwrap_failed')
    }
    return out
  }

  private load() {
    // Memoised, but a failed load is retried next call (the operator may fix the file).
    this.master ??= loadOrCreateKeyFile(this.keyFile).catch((e) => {
      this.master = undefined
      throw e
    })
    return this.master
  }
}

function aad(orgId: string): Buffer {
  return Buffer.concat([AAD_PREFIX, Buffer.from(orgId, 'utf8')])
}

/** A short public fingerprint of the master key; one-way, so it reveals nothing of it. */
function fingerprint(raw: Buffer): Buffer {
  return createHash('sha256').update('nightjar/kms-local/key-id\0').update(raw).digest().subarray(0, KEY_ID_BYTES)
}

async function loadOrCreateKeyFile(path: string): Promise<{ key: KeyObject; keyId: Buffer }> {
  let raw = await readKeyFile(path)
  if (!raw) {
    await createKeyFile(path)
    raw = await readKeyFile(path)
    if (!raw) throw new KmsConfigError(`KMS key file ${path} vanished right after it was created`)
  }
  try {
    return { key: createSecretKey(raw), keyId: fingerprint(raw) }
  } finally {
    raw.fill(0) // the KeyObject holds its own copy
  }
}

/** The key as 32 raw bytes, or null if the file does not exist. */
async function readKeyFile(path: string): Promise<Buffer | null> {
  let st
  try {
    // stat, not lstat: mounted secrets (Kubernetes) are symlinks to the real file,
    // whose own mode is what gets checked.
    st = await stat(path)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new KmsConfigError(`KMS key file ${path} cannot be read: ${(e as Error).message}`)
  }
  if (!st.isFile()) throw new KmsConfigError(`KMS key file ${path} is not a regular file`)
  // POSIX modes mean nothing on Windows; everywhere else a readable-by-others key is refused.
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(3, '0')
    throw new KmsConfigError(`KMS key file ${path} has mode ${mode}: it must not be group- or world-accessible (chmod 600 it)`)
  }
  const buf = await readFile(path)
  if (buf.length === DATA_KEY_BYTES) return buf
  // Also accept the base64 text an operator gets from `openssl rand -base64 32`.
  const text = buf.toString('latin1').trim()
  buf.fill(0)
  if (/^[A-Za-z0-9+/]{43}=$/.test(text)) {
    const decoded = Buffer.from(text, 'base64')
    if (decoded.length === DATA_KEY_BYTES) return decoded
  }
  throw new KmsConfigError(`KMS key file ${path} must hold exactly ${DATA_KEY_BYTES} bytes (raw, or base64 text); refusing it`)
}

/**
 * Writes a fresh key to a private temp file, then hard-links it into place: link()
 * never overwrites, so two processes starting together cannot clobber each other's
 * key, and no reader ever sees a half-written file.
 */
async function createKeyFile(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const tmp = `${path}.${process.pid}.${randomUUID()}.tmp`
  const fh = await open(tmp, 'wx', 0o600)
  const key = randomBytes(DATA_KEY_BYTES)
  try {
    await fh.chmod(0o600) // independent of the umask
    await fh.writeFile(key)
    await fh.sync()
  } finally {
    key.fill(0)
    await fh.close()
  }
  try {
    await link(tmp, path)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new KmsConfigError(`KMS key file ${path} cannot be created: ${(e as Error).message}`)
  } finally {
    await unlink(tmp).catch(() => {}) // best effort: the temp file may already be renamed or gone
  }
  // On EEXIST another process won; its file is read and checked like any other.
}
