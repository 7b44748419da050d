// The project's own lint rules (scripts/lint-rules.ts) catch what they are for and pass the
// safe forms: `npm run lint` over the tree proves there are no findings, this proves a finding
// would be reported. No type information is needed for these rules, so no program is built.
import t from 'tap'
import { Linter } from 'eslint'
import tseslint from 'typescript-eslint'
import { AROUND_THE_CATALOGUE, nightjarRules } from '../../scripts/lint-rules.ts'

const linter = new Linter({ configType: 'flat' })
const lint = (code: string, rules: Linter.RulesRecord) =>
  linter.verify(code, [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { nightjar: nightjarRules }, rules }], 'sample.ts')
/** the 1-based lines a rule reports in a sample */
const reported = (code: string, rules: Linter.RulesRecord) => {
  const messages = lint(code, rules)
  const fatal = messages.filter((m) => m.fatal)
  if (fatal.length) throw new Error(`the sample does not parse: ${fatal[0].message}`)
  return messages.map((m) => m.line)
}

t.test('subtest-before-awaited-work: a subtest racing its parent is found, the safe forms pass', async (t) => {
  const rule = { 'nightjar/subtest-before-awaited-work': 'error' } as const
  const racing = `t.test('p', async (t) => {\n  t.test('reads', async () => { await read() })\n  await end()\n})`
  t.same(reported(racing, rule), [2], 'un-awaited subtest, then an awaited call: found')
  const loop = `t.test('p', async (t) => {\n  t.test('reads', async () => { await read() })\n  for await (const x of xs) use(x)\n})`
  t.same(reported(loop, rule), [2], 'a for await after it counts as awaited work')
  const awaited = `t.test('p', async (t) => {\n  await t.test('reads', async () => { await read() })\n  await end()\n})`
  t.same(reported(awaited, rule), [], 'the subtest awaited: fine')
  const onlySubtests = `t.test('p', async (t) => {\n  t.test('a', async () => { await a() })\n  t.test('b', async () => { await b() })\n  t.teardown(() => end())\n})`
  t.same(reported(onlySubtests, rule), [], 'subtests queue behind each other; a teardown runs after them')
  const defined = `t.test('p', async (t) => {\n  t.test('a', async () => { await a() })\n  const later = async () => { await end() }\n})`
  t.same(reported(defined, rule), [], 'a function that awaits, merely defined, is not awaited work')
})

t.test('silent-catch-says-why: a catch that does nothing needs a reason beside it', async (t) => {
  const rule = { 'nightjar/silent-catch-says-why': 'error' } as const
  t.same(reported(`await close().catch(() => {})`, rule), [1], 'an empty .catch handler with no reason: found')
  t.same(reported(`try { parse(s) } catch {}`, rule), [1], 'an empty catch block with no reason: found')
  t.same(reported(`try { parse(s) } catch (e) {}`, rule), [1], 'a bound but unused error is dropped too')
  t.same(reported(`await close().catch(() => {}) // closing twice is fine`, rule), [], 'a reason on the line')
  t.same(reported(`// a gone session has nothing to disable\nawait cdp.send('x').catch(() => {})`, rule), [], 'a reason just above')
  t.same(reported(`try { parse(s) } catch { /* not JSON: the default stands */ }`, rule), [], 'a reason inside')
  t.same(reported(`const x = await read().catch(() => null)\nfunction f () { try { a() } catch { return false } }`, rule), [], 'a catch that answers something is not silent')
})

t.test('the catalogue rule refuses each way of building an error around it', async (t) => {
  const rules = { 'no-restricted-syntax': ['error', ...AROUND_THE_CATALOGUE] } as Linter.RulesRecord
  const samples: [string, string][] = [
    ['constructs an error class directly', `throw new ApiError(400, 'bad_request', 'x')`],
    ['constructs an error class directly', `throw new OAuthError('invalid_request', 'x')`],
    ['calls a pre-catalogue helper', `throw badRequest('x')`],
    ['writes a service error body by hand', `reply.send({ error: { code: 'forbidden', message: 'no' } })`],
    ['writes an OAuth error body by hand', `reply.send({ error: 'invalid_grant', error_description: 'no' })`],
    ['answers a literal error status', `reply.code(404).send(body)`],
    ['answers a literal error status', `res.writeHead(503, headers)`],
    ['answers a literal error status', `sendPage(reply, 400, page)`],
    ['writes a raw HTTP error response', `socket.end('HTTP/1.1 403 Forbidden\\r\\n\\r\\n')`],
    ['writes a raw HTTP error response', 'socket.end(`HTTP/1.1 502 Bad Gateway\\r\\n${x}`)'],
    ['gives an error status literally', `const answer = { status: 409, body }`],
    ['passes a literal status to an error superclass', `class Gone extends ApiError { constructor () { super(410, 'gone', 'x') } }`],
  ]
  for (const [what, code] of samples) {
    const found = lint(code, rules).map((m) => m.message)
    t.ok(found.some((m) => m.startsWith(what)), `${what}: ${code}`)
  }
  const fine = [`throw errors.forbidden()`, `reply.code(200).send(body)`, `const ok = { status: 200 }`, `x.badRequest('a method of something else')`, `throw oauthErrors.invalidGrant()`]
  for (const code of fine) t.same(lint(code, rules), [], `not an error: ${code}`)
})
