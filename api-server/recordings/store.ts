// The RecordingStore port: where a recording's blobs live. Keys are `<prefix>/<chunk>.json`
// strings made by the api-server (ids and numbers only, never user input). Two adapters:
//  - DirectoryRecordingStore: files under <data dir>/recordings (the embedded runtime);
//  - S3RecordingStore: one bucket (optionally a key prefix) through @aws-sdk/client-s3, for
//    a cluster, where every api-server replica must read what another wrote. Any
//    S3-compatible server works (endpoint + path-style addressing).
import { mkdir, readdir, readFile, rm, writeFile, rename } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { randomBytes } from 'node:crypto'
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'

export interface RecordingStore {
  /** Writes (or overwrites) one blob. */
  put(key: string, body: Buffer): Promise<void>
  /** One blob's bytes; null when there is none. */
  get(key: string): Promise<Buffer | null>
  /** Every key under `prefix + '/'`, sorted. */
  list(prefix: string): Promise<string[]>
  /** Deletes every blob under `prefix + '/'` (nothing there is fine). */
  deletePrefix(prefix: string): Promise<void>
}

const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/

function checkKey(key: string): string {
  // keys are ours, but a store must never be walked out of its root by one
  if (!KEY.test(key) || key.split('/').some((p) => p === '.' || p === '..')) throw new Error('invalid recording key')
  return key
}

export class DirectoryRecordingStore implements RecordingStore {
  readonly root: string
  constructor(root: string) {
    this.root = resolve(root)
  }

  #path(key: string): string {
    const p = resolve(this.root, ...checkKey(key).split('/'))
    if (!p.startsWith(this.root + sep)) throw new Error('invalid recording key')
    return p
  }

  async put(key: string, body: Buffer): Promise<void> {
    const p = this.#path(key)
    await mkdir(join(p, '..'), { recursive: true, mode: 0o700 })
    // write then rename: a reader never sees half a chunk
    const tmp = `${p}.${randomBytes(6).toString('hex')}.tmp`
    await writeFile(tmp, body, { mode: 0o600 })
    await rename(tmp, p)
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.#path(key))
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw e
    }
  }

  async list(prefix: string): Promise<string[]> {
    try {
      const names = await readdir(this.#path(prefix))
      return names.filter((n) => !n.endsWith('.tmp')).map((n) => `${prefix}/${n}`).sort()
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw e
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.#path(prefix), { recursive: true, force: true })
  }
}

export interface S3StoreOptions {
  bucket: string
  /** prepended to every key (e.g. "nightjar/recordings"); none by default */
  prefix?: string
  region?: string
  /** an S3-compatible server's URL; path-style addressing is used with it */
  endpoint?: string
  /** explicit credentials (tests); otherwise the SDK's default chain (IRSA, env, profile) */
  credentials?: { accessKeyId: string; secretAccessKey: string }
  client?: S3Client
}

export class S3RecordingStore implements RecordingStore {
  readonly #client: S3Client
  readonly #bucket: string
  readonly #prefix: string

  constructor(opts: S3StoreOptions) {
    this.#bucket = opts.bucket
    this.#prefix = opts.prefix ? opts.prefix.replace(/\/+$/, '') + '/' : ''
    this.#client = opts.client ?? new S3Client({
      region: opts.region ?? 'us-east-1',
      ...(opts.endpoint ? { endpoint: opts.endpoint, forcePathStyle: true } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
    })
  }

  async put(key: string, body: Buffer): Promise<void> {
    await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + checkKey(key), Body: body, ContentType: 'application/json' }))
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const r = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + checkKey(key) }))
      return r.Body ? Buffer.from(await r.Body.transformToByteArray()) : Buffer.alloc(0)
    } catch (e) {
      if ((e as { name?: string }).name === 'NoSuchKey' || (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null
      throw e
    }
  }

  async list(prefix: string): Promise<string[]> {
    const full = this.#prefix + checkKey(prefix) + '/'
    const keys: string[] = []
    let token: string | undefined
    do {
      const r = await this.#client.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: full, ContinuationToken: token }))
      for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key.slice(this.#prefix.length))
      token = r.IsTruncated ? r.NextContinuationToken : undefined
    } while (token)
    return keys.sort()
  }

  async deletePrefix(prefix: string): Promise<void> {
    const keys = await this.list(prefix)
    for (let i = 0; i < keys.length; i += 1000) {
      await this.#client.send(new DeleteObjectsCommand({
        Bucket: this.#bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((k) => ({ Key: this.#prefix + k })), Quiet: true },
      }))
    }
  }

  destroy(): void {
    this.#client.destroy()
  }
}
