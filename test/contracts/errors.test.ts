// The error catalogue (contracts/errors.ts): every error the service returns is
// declared once and built only through it. Fails on
//  - an entry that breaks the rule (contracts/errors/rule.ts),
//  - an entry no source file uses (errors.<key>, oauthErrors.<key>, …),
//  - a spec Errors row (ERR-nn in docs/spec/CHECKLIST.md) no entry serves,
//  - an error table in docs/errors.md that is not what scripts/gen-error-table.ts writes.
// An error built around the catalogue (new ApiError(…), a literal error body or status) is
// the linter's to refuse (AROUND_THE_CATALOGUE in scripts/lint-rules.ts).
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ApiError, CATALOGUE, CODE_STATUS, FAMILIES, OAUTH_STATUS, OAuthError, REASON_PATTERN, SPEC_FIXED_REASONS, errors, fromBody, isError, oauthErrors,
  pageErrors, rpcErrors, upgradeErrors, type ErrorCode, type Family, type Listed, type OAuthErrorCode,
} from '../../contracts/errors.ts'
import { readReadme, renderErrorTable, withErrorTable } from '../../scripts/gen-error-table.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CHECKLIST = join(ROOT, 'docs/spec/CHECKLIST.md')
/** where errors are raised: scanned for uses */
const SOURCE_DIRS = ['api-server', 'browser-pod', 'operator', 'cli', 'tunnel', 'contracts']

function sourceFiles(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (p.endsWith('.ts')) out.push({ file: relative(ROOT, p), text: readFileSync(p, 'utf8') })
    }
  }
  for (const d of SOURCE_DIRS) if (existsSync(join(ROOT, d))) walk(join(ROOT, d))
  return out
}
const SOURCES = sourceFiles()
/** the catalogue's own files (contracts/errors.ts and contracts/errors/) do not count as uses */
const isCatalogue = (file: string) => file === 'contracts/errors.ts' || file.startsWith('contracts/errors/')

/** a placeholder argument for a builder parameter */
const sample = (name: string) => (/Secs$|^max$|^quota$|^interval$/.test(name) ? 7 : `<${name}>`)
function build(e: Listed): { status: number; code: unknown; reason?: string; headers: Record<string, string>; message: string } {
  const args: unknown[] = []
  if (Array.isArray(e.reason)) args.push(e.reason[0])
  for (const a of e.args ?? []) args.push(sample(a))
  if ('details' in e && e.details) args.push('<detail>')
  const make = { api: errors, oauth: oauthErrors, page: pageErrors, upgrade: upgradeErrors, rpc: rpcErrors }[e.family] as Record<string, (...a: unknown[]) => unknown>
  const made = make[e.key](...args) as Record<string, unknown>
  if (made instanceof ApiError) return { status: made.status, code: made.code, reason: made.reason, headers: made.headers, message: made.message }
  if (made instanceof OAuthError) return { status: made.status, code: made.error, headers: made.headers, message: made.message }
  if (e.family === 'rpc') return { status: e.status, code: made.code, headers: {}, message: String(made.message) }
  return { status: made.status as number, code: null, headers: made.headers as Record<string, string>, message: String(made.message) }
}

t.test('the catalogue, listed', async (t) => {
  const byFamily = (f: Family) => CATALOGUE.filter((e) => e.family === f)
  for (const f of Object.keys(FAMILIES) as Family[]) {
    t.comment(`${FAMILIES[f].builder} (${byFamily(f).length}): ${byFamily(f).map((e) => e.key).join(' ')}`)
  }
  t.comment(`${CATALOGUE.length} errors in all`)
  const keys = CATALOGUE.map((e) => e.key)
  t.same(keys.filter((k, i) => keys.indexOf(k) !== i), [], 'each key is declared once, across every family')
})

t.test('every entry follows the rule', async (t) => {
  const problems: string[] = []
  const fixed = new Set<string>(SPEC_FIXED_REASONS)
  const bodies = new Map<string, string>()
  for (const e of CATALOGUE) {
    const where = `${e.family} ${e.key}`
    if (e.family === 'api') {
      const allowed = CODE_STATUS[e.code as ErrorCode]
      if (!allowed) problems.push(`${where}: code ${String(e.code)} is not a service code`)
      else if (!allowed.includes(e.status)) problems.push(`${where}: ${String(e.code)} with status ${e.status} (the rule: ${allowed.join(' or ')})`)
      for (const r of e.reason === null ? [] : Array.isArray(e.reason) ? e.reason : [e.reason as string]) {
        if (!REASON_PATTERN.test(r) && !fixed.has(r)) problems.push(`${where}: reason ${r} is neither snake_case nor a spelling the spec fixes`)
      }
    }
    if (e.family === 'oauth') {
      const allowed = OAUTH_STATUS[e.code as OAuthErrorCode] ?? [400]
      if (!allowed.includes(e.status)) problems.push(`${where}: ${String(e.code)} with status ${e.status} (the rule: ${allowed.join(' or ')})`)
    }
    if (e.status < 400 || e.status > 599) problems.push(`${where}: status ${e.status} is not an error`)
    if (typeof e.message === 'function') {
      if ((e.args ?? []).length !== e.message.length) problems.push(`${where}: message builder takes ${e.message.length} arguments, args names ${(e.args ?? []).length}`)
    } else if (e.args) problems.push(`${where}: args without a message builder`)
    if (e.retryAfter === 'arg' && e.args?.[0] !== 'retryAfterSecs') problems.push(`${where}: retryAfter 'arg' needs the builder's first parameter retryAfterSecs`)
    if (!e.when.trim()) problems.push(`${where}: no "when"`)
    for (const s of e.spec ?? []) if (!/^(INV|FLD|EP|RULE|AUTH|EV|ERR|LIM)-\d{2}$/.test(s)) problems.push(`${where}: spec row ${s} is not a checklist id`)
    // two entries with the same wire body could not be told apart by a client
    if (e.family === 'api' || e.family === 'oauth') {
      const b = build(e)
      const id = `${b.status} ${String(b.code)} ${b.reason ?? ''} ${b.message}`
      if (bodies.has(id)) problems.push(`${where}: the same status, code, reason and message as ${bodies.get(id)}`)
      bodies.set(id, e.key)
    }
  }
  t.same(problems, [], 'no entry breaks the rule')
})

t.test('each constructor builds exactly what its entry declares', async (t) => {
  for (const e of CATALOGUE) {
    const b = build(e)
    t.equal(b.status, e.status, `${e.key}: status`)
    t.equal(b.code, e.family === 'page' || e.family === 'upgrade' ? null : e.code, `${e.key}: code`)
    if (e.family === 'api') t.equal(b.reason, Array.isArray(e.reason) ? e.reason[0] : (e.reason ?? undefined), `${e.key}: reason`)
    if (e.retryAfter !== undefined) t.equal(b.headers['retry-after'], String(e.retryAfter === 'arg' ? 7 : e.retryAfter), `${e.key}: Retry-After`)
    t.ok(b.message.length > 0, `${e.key}: a message`)
  }
  const denied = errors.credentialOriginDenied('evil.test')
  t.same(denied.toBody(), { error: { code: 'forbidden', message: 'origin not on the credential allowlist', reason: 'credential.origin_denied', host: 'evil.test' } }, 'the node\'s audit field rides in the body')
  const back = fromBody(403, JSON.parse(JSON.stringify(denied.toBody())))
  t.ok(isError(back, 'credentialOriginDenied'), 'a body received over HTTP is recognised as its entry')
  t.equal(back.key, 'credentialOriginDenied')
  t.same(back.details, { host: 'evil.test' })
  t.notOk(isError(errors.grantOriginDenied(), 'credentialOriginDenied'))
})

t.test('every spec Errors row is served by an entry', async (t) => {
  const served = new Set<string>(CATALOGUE.flatMap((e) => e.spec ?? []))
  // the checklist ships with the repository: without it this check would pass on nothing
  if (!existsSync(CHECKLIST)) throw new Error(`${CHECKLIST} is missing: the spec checklist lives in docs/spec/`)
  const text = readFileSync(CHECKLIST, 'utf8')
  const rows = [...text.matchAll(/\*\*(ERR-\d+)\*\*/g)].map((m) => m[1])
  const all = new Set([...text.matchAll(/\*\*([A-Z]+-\d+)\*\*/g)].map((m) => m[1]))
  t.same([...served].filter((s) => !all.has(s)), [], 'every spec id the catalogue names is a checklist row')
  t.ok(rows.length >= 30, `${rows.length} Errors rows`)
  t.same(rows.filter((r) => !served.has(r)), [], 'no spec Errors row without a catalogue entry')
})

t.test('every entry is used by the source', async (t) => {
  const used = new Set<string>()
  const pattern = new RegExp(`(?<![\\w./])(${Object.values(FAMILIES).map((f) => f.builder).join('|')})\\.(\\w+)\\b`, 'g')
  for (const { file, text } of SOURCES) {
    if (isCatalogue(file)) continue
    for (const m of text.matchAll(pattern)) used.add(`${m[1]}.${m[2]}`)
    // isError(e, 'key') names its key as a string
    for (const m of text.matchAll(/isError\([^,]+,\s*'(\w+)'\)/g)) used.add(`errors.${m[1]}`)
  }
  const unused = CATALOGUE.filter((e) => !used.has(`${FAMILIES[e.family].builder}.${e.key}`)).map((e) => `${FAMILIES[e.family].builder}.${e.key}`)
  // one failure per entry, so the summary names each (delete the entry, or build the error with it)
  for (const u of unused) t.fail(`${u} is declared but no source file builds it`)
  if (!unused.length) t.pass(`all ${CATALOGUE.length} entries are used`)
})

t.test('the error tables of docs/errors.md are generated from the catalogue', async (t) => {
  const readme = readReadme()
  t.ok(readme.includes(renderErrorTable()), 'docs/errors.md is current: run node --import tsx scripts/gen-error-table.ts')
  t.equal(withErrorTable(readme), readme, 'nothing else between the markers')
})
