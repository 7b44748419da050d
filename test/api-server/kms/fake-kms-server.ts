// A small AWS KMS stand-in that speaks the real wire protocol (JSON 1.1 over HTTP), so
// the aws provider is tested through the unmodified @aws-sdk/client-kms: request
// signing, serialisation, blob encoding and error parsing are all the SDK's own.
//
// It implements GenerateDataKey and Decrypt for one symmetric key, verifies the SigV4
// signature of every request against the static test credentials, and binds the
// EncryptionContext into each ciphertext blob (AES-256-GCM AAD), like KMS does.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeKmsOptions {
  accessKeyId: string
  secretAccessKey: string
  region: string
  keyId?: string
  alias?: string
}

export interface FakeKms {
  /** http://127.0.0.1:<port> — give it to the SDK as `endpoint`. */
  url: string
  keyId: string
  keyArn: string
  alias: string
  /** Successful operations by name (GenerateDataKey, Decrypt). */
  calls: Record<string, number>
  /** Every rejected request's error type, in order. */
  rejected: string[]
  /** While true, every call fails with AccessDeniedException (a KMS outage/IAM fault). */
  deny: boolean
  close(): Promise<void>
}

const ACCOUNT = '111122223333'
const BLOB_MAGIC = Buffer.from('FKMS', 'latin1')

class KmsFault extends Error {
  readonly type: string
  constructor(
    type: string,
    message: string,
  ) {
    super(message)
    this.type = type
  }
}

export async function startFakeKms(opts: FakeKmsOptions): Promise<FakeKms> {
  const keyId = opts.keyId ?? '1234abcd-12ab-34cd-56ef-1234567890ab'
  const alias = opts.alias ?? 'alias/nightjar-test'
  const keyArn = `arn:aws:kms:${opts.region}:${ACCOUNT}:key/${keyId}`
  const master = randomBytes(32)

  const resolves = (ref: unknown) =>
    ref === keyId || ref === keyArn || ref === alias || ref === `arn:aws:kms:${opts.region}:${ACCOUNT}:${alias}`

  const handlers: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    GenerateDataKey(body) {
      if (!resolves(body.KeyId)) throw new KmsFault('NotFoundException', `Key '${String(body.KeyId)}' does not exist`)
      if (body.KeySpec !== 'AES_256' && body.NumberOfBytes !== 32) {
        throw new KmsFault('ValidationException', 'this fake only makes AES_256 data keys')
      }
      const plaintext = randomBytes(32)
      const blob = wrap(plaintext, context(body.EncryptionContext))
      return { KeyId: keyArn, CiphertextBlob: blob.toString('base64'), Plaintext: plaintext.toString('base64') }
    },
    Decrypt(body) {
      if (body.KeyId !== undefined && !resolves(body.KeyId)) {
        throw new KmsFault('IncorrectKeyException', 'The key ID in the request does not identify a CMK that can perform this operation.')
      }
      if (typeof body.CiphertextBlob !== 'string') throw new KmsFault('ValidationException', 'CiphertextBlob is required')
      const plaintext = unwrap(Buffer.from(body.CiphertextBlob, 'base64'), context(body.EncryptionContext))
      return { KeyId: keyArn, Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' }
    },
  }

  // blob = magic | nonce(12) | ct | tag(16); AAD = the canonical encryption context
  function wrap(plaintext: Buffer, aad: Buffer): Buffer {
    const nonce = randomBytes(12)
    const c = createCipheriv('aes-256-gcm', master, nonce)
    c.setAAD(aad)
    return Buffer.concat([BLOB_MAGIC, nonce, c.update(plaintext), c.final(), c.getAuthTag()])
  }
  function unwrap(blob: Buffer, aad: Buffer): Buffer {
    const invalid = new KmsFault('InvalidCiphertextException', '')
    if (blob.length < 4 + 12 + 16 || !blob.subarray(0, 4).equals(BLOB_MAGIC)) throw invalid
    const d = createDecipheriv('aes-256-gcm', master, blob.subarray(4, 16))
    d.setAAD(aad)
    d.setAuthTag(blob.subarray(blob.length - 16))
    try {
      return Buffer.concat([d.update(blob.subarray(16, blob.length - 16)), d.final()])
    } catch {
      throw invalid // like KMS: a context mismatch is indistinguishable from a bad blob
    }
  }

  const fake: FakeKms = {
    url: '',
    keyId,
    keyArn,
    alias,
    calls: {},
    rejected: [],
    deny: false,
    close: () => new Promise<void>((res, rej) => server.close((e) => (e ? rej(e) : res()))),
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      try {
        const op = route(req)
        verifySigV4(req, raw, opts)
        if (fake.deny) throw new KmsFault('AccessDeniedException', 'denied by the test')
        let body: Record<string, unknown>
        try {
          body = JSON.parse(raw.toString('utf8') || '{}')
        } catch {
          throw new KmsFault('SerializationException', 'body is not JSON')
        }
        const out = handlers[op](body)
        fake.calls[op] = (fake.calls[op] ?? 0) + 1
        send(res, 200, out)
      } catch (e) {
        const f = e instanceof KmsFault ? e : new KmsFault('KMSInternalException', 'fake KMS failed')
        fake.rejected.push(f.type)
        // 400 for client faults (the SDK does not retry them); KMS itself uses 500 for its own.
        send(res, f.type === 'KMSInternalException' ? 500 : 400, { __type: f.type, message: f.message }, f.type)
      }
    })
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}

function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  const json = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(json),
    'x-amzn-requestid': randomBytes(8).toString('hex'),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  })
  res.end(json)
}

function route(req: IncomingMessage): string {
  if (req.method !== 'POST' || (req.url ?? '/').split('?')[0] !== '/') throw new KmsFault('UnknownOperationException', 'POST / only')
  if (req.headers['content-type'] !== 'application/x-amz-json-1.1') {
    throw new KmsFault('SerializationException', 'content-type must be application/x-amz-json-1.1')
  }
  const target = String(req.headers['x-amz-target'] ?? '')
  const m = /^TrentService\.(GenerateDataKey|Decrypt)$/.exec(target)
  if (!m) throw new KmsFault('UnknownOperationException', `unsupported target ${target}`)
  return m[1]
}

/** EncryptionContext as KMS binds it: independent of key order. */
function context(ec: unknown): Buffer {
  if (ec === undefined) return Buffer.alloc(0)
  if (!ec || typeof ec !== 'object') throw new KmsFault('ValidationException', 'EncryptionContext must be a map')
  const entries = Object.entries(ec as Record<string, unknown>).map(([k, v]) => [k, String(v)])
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return Buffer.from(JSON.stringify(entries), 'utf8')
}

/**
 * Recomputes the SigV4 signature (AWS4-HMAC-SHA256) from the request and the known
 * secret, so an unsigned request, wrong credentials or a body altered after signing
 * are all refused, as by KMS.
 */
function verifySigV4(req: IncomingMessage, body: Buffer, opts: FakeKmsOptions): void {
  const auth = String(req.headers.authorization ?? '')
  if (!auth) throw new KmsFault('MissingAuthenticationTokenException', 'Missing Authentication Token')
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth)
  if (!m) throw new KmsFault('IncompleteSignatureException', 'Authorization header is not SigV4')
  const [, akid, date, region, service, signedHeaders, signature] = m
  if (akid !== opts.accessKeyId) throw new KmsFault('UnrecognizedClientException', 'The security token included in the request is invalid.')
  if (region !== opts.region || service !== 'kms') throw new KmsFault('InvalidSignatureException', 'credential scope mismatch')
  const amzDate = String(req.headers['x-amz-date'] ?? '')
  if (!amzDate.startsWith(date)) throw new KmsFault('IncompleteSignatureException', 'x-amz-date missing or not in the credential scope')
  const names = signedHeaders.split(';')
  if (!names.includes('host') || !names.includes('x-amz-date')) throw new KmsFault('IncompleteSignatureException', 'host and x-amz-date must be signed')

  const payloadHash = createHash('sha256').update(body).digest('hex')
  const claimed = req.headers['x-amz-content-sha256']
  if (claimed !== undefined && claimed !== payloadHash) throw new KmsFault('InvalidSignatureException', 'payload hash mismatch')
  const [path, query = ''] = (req.url ?? '/').split('?')
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .sort()
    .join('&')
  const canonicalHeaders = names
    .map((n) => {
      const v = req.headers[n]
      return `${n}:${(Array.isArray(v) ? v.join(',') : String(v ?? '')).trim().replace(/\s+/g, ' ')}\n`
    })
    .join('')
  const canonicalRequest = [req.method, path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n')
  const scope = `${date}/${region}/${service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n')
  const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s).digest()
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${opts.secretAccessKey}`, date), region), service), 'aws4_request')
  const expected = hmac(kSigning, stringToSign)
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    throw new KmsFault('InvalidSignatureException', 'The request signature we calculated does not match the signature you provided.')
  }
}
