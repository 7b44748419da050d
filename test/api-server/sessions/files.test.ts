// Files in a session, end to end through both doors against real Chromium: a file put
// over REST and set into a page's <input type=file>, downloads kept and read back
// byte-identical, a download over the size limit refused with the session still
// usable, the limits on puts, and tenancy (a file of another session or org is a 404).
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb, PAGES_DIR } from '../../helpers/netns.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { waitFor } from '../../helpers/wait.ts'
import { FILE_MAX_BYTES, FILE_MAX_COUNT, FILE_READ_MAX_BYTES } from '../../../contracts/operations/drive-files.ts'
import { shown } from '../../helpers/perceived.ts'

const UPLOAD_PAGE = 'http://example.com/files-upload.html'
const DOWNLOAD_PAGE = 'http://example.com/files-download.html'

/** What files-upload.html shows of a file's bytes. */
function fnv1a(bytes: Buffer): string {
  let h = 0x811c9dc5
  for (const c of bytes) {
    h ^= c
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, '0')
}

/** The bytes files-download.html's "Small binary" button saves, computed here independently of the page. */
function sample(n: number): Buffer {
  const b = Buffer.alloc(n)
  let x = 7
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    b[i] = i < 256 ? i : x >>> 24
  }
  return b
}

t.test('files in a session', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const req = (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  const open = async () => {
    const r = await req('POST', '/v1/sessions', {})
    if (r.status !== 201) throw new Error(`session_start ${r.status} ${r.text}`)
    return r.body.id as string
  }
  const end = (id: string) => req('DELETE', `/v1/sessions/${id}`)
  const put = (id: string, name: string, bytes: Buffer, mimeType?: string) =>
    req('POST', `/v1/sessions/${id}/files`, { name, contentBase64: bytes.toString('base64'), ...(mimeType ? { mimeType } : {}) })
  const listed = async (id: string) => (await req('GET', `/v1/sessions/${id}/files`)).body.files as any[]

  const mcp = await mcpClient(t, s.url, acme.apiKey)
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await mcp.callTool({ name, arguments: args })
    if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
    return r
  }
  const toolError = async (name: string, args: Record<string, unknown>) => {
    const r = await mcp.callTool({ name, arguments: args })
    t.equal(r.isError, true, `${name} is refused`)
    return (r.structuredContent as any).error as { code: string; reason?: string; message: string }
  }

  t.test('the tools as MCP lists them: file_put is REST only, each with its annotations', async (t) => {
    const { tools } = await mcp.listTools()
    const byName = new Map(tools.map((x) => [x.name, x]))
    t.notOk(byName.has('file_put'), 'a put is REST only (its body is larger than the MCP door takes)')
    t.same(byName.get('file_upload')?.annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true })
    t.same(byName.get('file_list')?.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
    t.same(byName.get('file_read')?.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
    t.match(byName.get('file_upload')?.description, `at most ${FILE_MAX_COUNT} files per session, ${FILE_MAX_BYTES / 1024 / 1024} MiB each`, 'the limits are said')
  })

  t.test('a file put over REST is set into a file input over MCP; the page reads its name, size, type and bytes', async (t) => {
    const id = await open()
    const photo = randomBytes(1234)
    const notes = Buffer.from('shopping list: boots, socks\n')
    const p1 = await put(id, 'photo.png', photo)
    t.equal(p1.status, 201)
    t.match(p1.body, { name: 'photo.png', size: 1234, mimeType: 'image/png', source: 'upload', state: 'complete' }, 'the type follows the extension')
    t.match(p1.body.id, /^nfile_[0-9A-Za-z]{22}$/)
    const p2 = await put(id, 'notes.txt', notes, 'text/plain')
    t.equal(p2.status, 201)
    await call('navigate', { sessionId: id, url: UPLOAD_PAGE })

    const one = (await call('file_upload', { sessionId: id, selector: '#one', files: ['photo.png'] })).structuredContent as any
    t.match(one, { ok: true, url: UPLOAD_PAGE })
    t.same(one.files.map((f: any) => [f.id, f.name, f.size]), [[p1.body.id, 'photo.png', 1234]])
    await call('wait_for', { sessionId: id, text: 'one: photo.png' })
    const seen = (await call('perceive', { sessionId: id })).structuredContent as any
    t.match(shown(seen), `one: photo.png size=1234 type=image/png fnv=${fnv1a(photo)}`, 'the page read the file whole')

    await call('file_upload', { sessionId: id, selector: '#many', files: [p2.body.id, 'photo.png'] })
    await call('wait_for', { sessionId: id, text: 'many: notes.txt' })
    const both = (await call('perceive', { sessionId: id })).structuredContent as any
    t.match(shown(both), `many: notes.txt size=${notes.length} type=text/plain fnv=${fnv1a(notes)} | photo.png size=1234 type=image/png fnv=${fnv1a(photo)}`, 'by id and by name, several at once')

    const single = await toolError('file_upload', { sessionId: id, selector: '#one', files: ['photo.png', 'notes.txt'] })
    t.same([single.code, single.reason], ['bad_request', 'single_file_input'], 'several files into an input without multiple')
    const text = await toolError('file_upload', { sessionId: id, selector: '#text', files: ['photo.png'] })
    t.same([text.code, text.reason], ['bad_request', 'not_a_file_input'])
    const missing = await toolError('file_upload', { sessionId: id, selector: '#one', files: ['nope.png'] })
    t.same([missing.code, missing.message], ['not_found', 'unknown file'])

    const journal = await req('GET', `/v1/sessions/${id}/journal`)
    const putRow = journal.body.items.find((e: any) => e.op === 'file_put')
    t.match(putRow.detail, { name: 'photo.png', bytes: 1234 }, 'the journal keeps the name and the size')
    t.notOk(journal.text.includes(photo.toString('base64').slice(0, 40)) || journal.text.includes('shopping list'), 'never the content')
    const uploadRow = journal.body.items.find((e: any) => e.op === 'file_upload')
    t.same(uploadRow.detail, { selector: '#one', files: ['photo.png'] })
    await end(id)
  })

  t.test('a click that downloads keeps the file; it is listed and read back byte-identical over MCP and REST', async (t) => {
    const id = await open()
    await call('navigate', { sessionId: id, url: DOWNLOAD_PAGE })
    const clicked = (await call('act', { sessionId: id, verb: 'click', selector: '#small' })).structuredContent as any
    t.equal(clicked.url, DOWNLOAD_PAGE, 'the click answers and the page stays')
    const small = await waitFor(async () => (await listed(id)).find((f) => f.name === 'sample.bin' && f.state === 'complete'), { what: 'the download kept', timeoutMs: 30_000 })
    t.match(small, { size: 70000, source: 'download', mimeType: 'application/octet-stream' })
    const expected = sample(70000)

    const viaMcp = await call('file_read', { sessionId: id, fileId: small.id })
    const resource = (viaMcp.content as any)[0]
    t.equal(resource.type, 'resource')
    t.ok(Buffer.from(resource.resource.blob, 'base64').equals(expected), 'MCP: the bytes the page made, exactly')
    t.same(viaMcp.structuredContent, { file: small, offset: 0, bytes: 70000, eof: true }, 'metadata beside the bytes, never the bytes twice')

    const viaRest = await req('GET', `/v1/sessions/${id}/files/${small.id}`)
    t.equal(viaRest.status, 200)
    t.ok(Buffer.from(viaRest.body.contentBase64, 'base64').equals(expected), 'REST: the same bytes')
    const part = await req('GET', `/v1/sessions/${id}/files/${small.id}?offset=500&length=1000`)
    t.same([part.body.offset, part.body.bytes, part.body.eof], [500, 1000, false])
    t.ok(Buffer.from(part.body.contentBase64, 'base64').equals(expected.subarray(500, 1500)), 'a part, from an offset')
    const tooLong = await req('GET', `/v1/sessions/${id}/files/${small.id}?length=${FILE_READ_MAX_BYTES + 1}`)
    t.equal(tooLong.status, 400, 'a read is limited')

    // a network download (the server's own bytes), by a link with the download attribute
    await call('act', { sessionId: id, verb: 'click', selector: '#page' })
    const page = await waitFor(async () => (await listed(id)).find((f) => f.name === 'upload-page.html' && f.state === 'complete'), { what: 'the network download kept', timeoutMs: 30_000 })
    const onDisk = readFileSync(join(PAGES_DIR, 'files-upload.html'))
    t.match(page, { size: onDisk.length, mimeType: 'text/html' })
    const read = await call('file_read', { sessionId: id, fileId: 'upload-page.html' })
    t.ok(Buffer.from((read.content as any)[0].resource.blob, 'base64').equals(onDisk), 'byte-identical to what the server sent')

    // a downloaded file can be uploaded again
    await call('navigate', { sessionId: id, url: UPLOAD_PAGE })
    await call('file_upload', { sessionId: id, selector: '#one', files: [small.id] })
    await call('wait_for', { sessionId: id, text: `one: sample.bin size=70000 type=application/octet-stream fnv=${fnv1a(expected)}` })
    await end(id)
  })

  t.test('a 20 MB download is refused cleanly and the session goes on', async (t) => {
    const id = await open()
    await call('navigate', { sessionId: id, url: DOWNLOAD_PAGE })
    await call('act', { sessionId: id, verb: 'click', selector: '#big' })
    const big = await waitFor(async () => (await listed(id)).find((f) => f.name === 'big.bin' && f.state !== 'in_progress'), { what: 'the big download settled', timeoutMs: 30_000 })
    t.match(big, { state: 'refused', reason: 'too_large', source: 'download', size: 20 * 1024 * 1024 }, 'listed as refused, with its reason and size')
    const read = await req('GET', `/v1/sessions/${id}/files/${big.id}`)
    t.equal(read.status, 409)
    t.same([read.body.error.reason, read.body.error.message], ['file_not_ready', 'file is refused, not complete'])
    const nav = (await call('navigate', { sessionId: id, url: UPLOAD_PAGE })).structuredContent as any
    t.equal(nav.title, 'Files upload', 'a navigation afterwards works')
    const seen = (await call('perceive', { sessionId: id })).structuredContent as any
    t.match(shown(seen), /nothing chosen/, 'and perceive')
    await call('navigate', { sessionId: id, url: DOWNLOAD_PAGE })
    await call('act', { sessionId: id, verb: 'click', selector: '#small' })
    await waitFor(async () => (await listed(id)).find((f) => f.name === 'sample.bin' && f.state === 'complete'), { what: 'a later download kept', timeoutMs: 30_000 })
    await end(id)
  })

  t.test('puts over the size or the count limit are refused with typed errors; a download past the count is refused', async (t) => {
    const id = await open()
    const over = await put(id, 'big.bin', Buffer.alloc(FILE_MAX_BYTES + 1))
    t.equal(over.status, 413)
    t.same([over.body.error.code, over.body.error.reason], ['payload_too_large', 'file_too_large'])
    t.equal(over.body.error.message, `file is larger than the limit of ${FILE_MAX_BYTES} bytes`)
    const atLimit = await put(id, 'exact.bin', Buffer.alloc(FILE_MAX_BYTES, 1))
    t.equal(atLimit.status, 201, 'exactly the limit is kept')
    const body = await s.request('POST', `/v1/sessions/${id}/files`, { token: acme.apiKey, body: JSON.stringify({ name: 'x.bin', contentBase64: 'A'.repeat(16 * 1024 * 1024) }) })
    t.equal(body.status, 413, 'a body over the route’s own limit')
    t.equal(body.body.error.code, 'payload_too_large')

    for (let i = 1; i < FILE_MAX_COUNT; i++) t.equal((await put(id, `f${i}.txt`, Buffer.from(`file ${i}`))).status, 201)
    const tooMany = await put(id, 'one-more.txt', Buffer.from('x'))
    t.equal(tooMany.status, 409)
    t.same([tooMany.body.error.code, tooMany.body.error.reason], ['conflict', 'too_many_files'])
    t.equal((await listed(id)).length, FILE_MAX_COUNT, 'nothing of the refused puts is kept')

    await call('navigate', { sessionId: id, url: DOWNLOAD_PAGE })
    await call('act', { sessionId: id, verb: 'click', selector: '#small' })
    const refused = await waitFor(async () => (await listed(id)).find((f) => f.name === 'sample.bin'), { what: 'the download recorded', timeoutMs: 30_000 })
    t.match(refused, { state: 'refused', reason: 'too_many_files', source: 'download' })
    t.equal((await call('perceive', { sessionId: id })).isError, undefined, 'the session goes on')

    const bad = await req('POST', `/v1/sessions/${id}/files`, { name: '../etc/passwd', contentBase64: 'AA==' })
    t.equal(bad.status, 400, 'a name is a file name, never a path')
    await end(id)
  })

  t.test('[INV-04] a file of another session or another org is a 404', async (t) => {
    const a = await open()
    const b = await open()
    const mine = (await put(a, 'secret-plan.txt', Buffer.from('plan'))).body
    const fromB = await req('GET', `/v1/sessions/${b}/files/${mine.id}`)
    const unknown = await req('GET', `/v1/sessions/${b}/files/nfile_0000000000000000000000`)
    t.equal(fromB.status, 404)
    t.equal(fromB.text, unknown.text, 'another session’s file is unknown here, byte-identical')
    t.same(fromB.body.error, { code: 'not_found', message: 'unknown file' })
    await call('navigate', { sessionId: b, url: UPLOAD_PAGE })
    const upload = await toolError('file_upload', { sessionId: b, selector: '#one', files: [mine.id] })
    t.equal(upload.code, 'not_found')
    t.same(await listed(b), [], 'session b lists none of a’s files')

    const globex = await s.bootstrap()
    const foreign = await req('GET', `/v1/sessions/${a}/files/${mine.id}`, undefined, globex.apiKey)
    const nobody = await req('GET', '/v1/sessions/nsess_0000000000000000000000/files/' + mine.id, undefined, globex.apiKey)
    t.equal(foreign.status, 404)
    t.equal(foreign.text, nobody.text, 'another org’s session and file: the one 404')
    t.equal((await req('GET', `/v1/sessions/${a}/files`, undefined, globex.apiKey)).text, nobody.text)
    t.equal((await req('POST', `/v1/sessions/${a}/files`, { name: 'x.txt', contentBase64: 'AA==' }, globex.apiKey)).text, nobody.text)
    await end(a)
    await end(b)
  })
})
