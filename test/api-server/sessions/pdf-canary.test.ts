// The PDF canary: after credential_fill a page copies the secret into its title, text, a
// link, a field and hex console output, and a PDF carries text, not pixels, so pdf is
// refused (403 pdf_after_fill) over REST and MCP; every reply is searched with the same
// extraction (raw bytes, inflated streams, pdfjs metadata, text, annotations) for the
// canary's encodings. A positive control finds a plain marker in a PDF of the same page
// without a fill. Canary values are only checked with includes(), never printed.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { inflateSync } from 'node:zlib'
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { mcpClient } from '../../helpers/mcp.ts'

const MASK = '••••••••'
const CANARY = `Pdf-Cnry-${randomBytes(6).toString('hex')}`
const MARKER = `Plain-Mark-${randomBytes(6).toString('hex')}`

/** A value and the forms a PDF or a console line could carry it in. */
function formsOf(v: string): string[] {
  const hex = Buffer.from(v).toString('hex')
  return [v, hex, hex.toUpperCase(), Buffer.from(v).toString('base64').replace(/=+$/, ''), encodeURIComponent(v), v.slice(4)]
}

/** Every place a PDF keeps text, as strings to search: raw bytes, inflated streams, metadata, text layer, annotations. */
async function pdfTexts(pdf: Buffer): Promise<{ raw: string; utf16: string; inflated: string; streams: number; inflatedCount: number; metadata: string; text: string; annotations: string }> {
  const raw = pdf.toString('latin1')
  // every stream object, inflated where it is FlateDecode (a failure to inflate is counted, not hidden)
  let inflated = ''
  let streams = 0
  let inflatedCount = 0
  const re = /<<((?:(?!>>\s*stream)[\s\S])*?)>>\s*stream\r?\n/g
  for (let m = re.exec(raw); m; m = re.exec(raw)) {
    streams++
    const start = m.index + m[0].length
    const end = raw.indexOf('endstream', start)
    if (end < 0 || !/\/FlateDecode/.test(m[1])) continue
    try {
      inflated += inflateSync(pdf.subarray(start, end)).toString('latin1') + '\n'
      inflatedCount++
    } catch {
      // a truncated tail (the EOL before endstream): inflate what is there
      inflated += inflateSync(pdf.subarray(start, end), { finishFlush: 2 /* Z_SYNC_FLUSH */ }).toString('latin1') + '\n'
      inflatedCount++
    }
  }
  // PDF text strings may be UTF-16BE: searched as such too
  const utf16 = swapUtf16(raw + inflated)
  const doc = await getDocument({ data: new Uint8Array(pdf), useSystemFonts: false, isEvalSupported: false }).promise
  const meta = await doc.getMetadata()
  const metadata = JSON.stringify(meta.info) + (meta.metadata ? JSON.stringify([...meta.metadata]) : '')
  let text = ''
  let annotations = ''
  for (let i = 1; i <= doc.numPages; i++) {
    const page = await doc.getPage(i)
    const content = await page.getTextContent()
    text += content.items.map((it) => ('str' in it ? it.str : '')).join('') + '\n'
    annotations += JSON.stringify(await page.getAnnotations())
  }
  await doc.destroy()
  return { raw, utf16, inflated, streams, inflatedCount, metadata, text, annotations }
}

/** The latin-1 text read as UTF-16BE (both alignments), so a UTF-16BE PDF string is searchable as plain text. */
function swapUtf16(s: string): string {
  const b = Buffer.from(s, 'latin1')
  const even = Buffer.from(b.subarray(0, b.length & ~1)).swap16().toString('utf16le')
  const odd = Buffer.from(b.subarray(1, 1 + ((b.length - 1) & ~1))).swap16().toString('utf16le')
  return even + '\n' + odd
}

/** Where in a PDF any of `forms` shows up (names only: safe to print). */
async function foundIn(pdf: Buffer, forms: string[]): Promise<string[]> {
  const p = await pdfTexts(pdf)
  const places = { raw: p.raw, utf16: p.utf16, inflated: p.inflated, metadata: p.metadata, text: p.text, annotations: p.annotations }
  return Object.entries(places).filter(([, s]) => forms.some((f) => s.includes(f))).map(([k]) => k)
}

/** Every PDF a reply carries (base64 strings that decode to %PDF-). */
function pdfsIn(reply: unknown): Buffer[] {
  const out: Buffer[] = []
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      if (v.length > 100 && /^[A-Za-z0-9+/=]+$/.test(v)) {
        const b = Buffer.from(v, 'base64')
        if (b.subarray(0, 5).toString() === '%PDF-') out.push(b)
      }
    } else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x)
  }
  walk(reply)
  return out
}

t.test('[INV-03] PDF canary: no PDF carries a filled secret; the extraction that would find it is proven on a plain marker', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'login.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const persona = await createPersona(s, acme.apiKey, { name: 'pdf', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })
  const mcp = await mcpClient(t, s.url, acme.apiKey)
  const page = 'http://login.example.com/echo-pdf.html'
  const rest = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    return r
  }
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await rest(method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status}`)
    return r.body
  }
  const start = async (body: Record<string, unknown>) => (await must('POST', '/v1/sessions', body)).id as string

  await t.test('the positive control: a plain marker the page echoes is found in the PDF, by every extraction', async (t) => {
    const id = await start({})
    await must('POST', `/v1/sessions/${id}/navigate`, { url: page })
    await must('POST', `/v1/sessions/${id}/act`, { verb: 'type', selector: '#pw', text: MARKER })
    await must('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#go' })
    await must('POST', `/v1/sessions/${id}/wait-for`, { text: 'echoed' })
    const r = await rest('POST', `/v1/sessions/${id}/pdf`, {})
    t.equal(r.status, 200, 'a PDF is made on a session nobody filled a secret in')
    const [pdf] = pdfsIn(r.body)
    t.ok(pdf, 'the reply carries a PDF')
    const p = await pdfTexts(pdf)
    t.ok(p.streams > 0 && p.inflatedCount > 0, `streams inflated (${p.inflatedCount} of ${p.streams})`)
    t.match(p.inflated, /\bBT\b[\s\S]*\bTj|TJ\b/, 'the inflated content holds text operators: the inflation is real')
    t.ok(p.raw.includes(`E:${MARKER}`), 'raw bytes: the /Title is in clear')
    t.ok(p.metadata.includes(`E:${MARKER}`), 'metadata: pdfjs reads the title')
    t.ok(p.text.includes(`body: ${MARKER}`), 'text layer: pdfjs extracts the body text')
    t.ok(p.text.includes(Buffer.from(MARKER).toString('hex')), 'text layer: and the hex line')
    t.ok(p.annotations.includes(encodeURIComponent(MARKER)), 'annotations: the link target')
    const found = await foundIn(pdf, formsOf(MARKER))
    t.ok(['raw', 'metadata', 'text', 'annotations'].every((k) => found.includes(k)), `the search used on the canary below finds the marker (${found.join(', ')})`)
    // the same PDF over MCP: a resource blob
    const tool = await mcp.callTool({ name: 'pdf', arguments: { sessionId: id } })
    t.notOk(tool.isError)
    t.equal(pdfsIn(tool).length, 1, 'MCP returns the PDF as a blob')
    await must('DELETE', `/v1/sessions/${id}`)
  })

  await t.test('after credential_fill, the page echoes the secret into title, text, a link, a field and hex console output: pdf is refused', async (t) => {
    const id = await start({ identity: persona.identityId })
    await must('POST', `/v1/sessions/${id}/navigate`, { url: page })
    const before = await rest('POST', `/v1/sessions/${id}/pdf`, {})
    t.equal(before.status, 200, 'a persona session makes PDFs until a secret is filled')
    const filled = await must('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    // a fill answers with what it changed; the rest is the spec's result
    const { changes: _fillChanges, ...fillResult } = filled
    t.same(fillResult, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' })
    await must('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#go' })
    await must('POST', `/v1/sessions/${id}/wait-for`, { text: 'echoed' })
    const forms = formsOf(CANARY)
    const replies: unknown[] = []

    const r = await rest('POST', `/v1/sessions/${id}/pdf`, {})
    replies.push(r.body, r.text)
    t.equal(r.status, 403)
    t.same(r.body, { error: { code: 'forbidden', message: 'no PDF is made of a session a credential was filled in', reason: 'pdf_after_fill' } })
    const tool = await mcp.callTool({ name: 'pdf', arguments: { sessionId: id } })
    replies.push(tool)
    t.equal(tool.isError, true, 'MCP: the tool errors')
    t.same(tool.structuredContent, { status: 403, ...r.body }, 'MCP: the same typed refusal')
    // a page that changed since (another document, the title reset) changes nothing: the session was filled
    await must('POST', `/v1/sessions/${id}/reload`, {})
    const again = await rest('POST', `/v1/sessions/${id}/pdf`, {})
    replies.push(again.body)
    t.equal(again.status, 403, 'still refused after a reload')

    const pdfs = replies.flatMap(pdfsIn)
    t.equal(pdfs.length, 0, 'no reply carries a PDF')
    for (const pdf of pdfs) t.same(await foundIn(pdf, forms), [], 'and none would carry the canary')
    t.notOk(replies.some((x) => forms.some((f) => JSON.stringify(x).includes(f))), 'no canary form in any pdf reply')

    const c = await must('GET', `/v1/sessions/${id}/console`)
    const text = JSON.stringify(c)
    t.notOk(forms.some((f) => text.includes(f)), 'console: no canary form (raw, hex, HEX, base64, URL-encoded)')
    t.ok(c.messages.some((m: any) => m.text === MASK), 'console: console.log(hex(v)) is there, masked')
    t.ok(c.messages.some((m: any) => m.text === `HEX ${MASK}`), 'console: the upper-case hex too')
    const p = await must('POST', `/v1/sessions/${id}/perceive`, { full: true })
    t.notOk(forms.some((f) => JSON.stringify(p).includes(f)), 'perceive: no canary form')
    await must('DELETE', `/v1/sessions/${id}`)
    t.notOk(forms.some((f) => s.logs().includes(f)), 'the server log holds no canary form')
  })
})
