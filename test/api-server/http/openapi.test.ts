// /openapi.json: a valid OpenAPI 3.1 document (by @seriousme/openapi-schema-validator,
// the OpenAPI Initiative's JSON Schemas) with every operation, its success response
// from the contract's output and its errors in the one Error shape.
import t from 'tap'
import { z } from 'zod'
import { Validator } from '@seriousme/openapi-schema-validator'
import { contracts } from '../../../contracts/operations/index.ts'
import { startTestServer } from '../../helpers/server.ts'

t.test('/openapi.json', async (t) => {
  const s = await startTestServer(t)
  const res = await s.request('GET', '/openapi.json')
  t.equal(res.status, 200)
  const doc = res.body

  t.test('is valid OpenAPI 3.1', async (t) => {
    const validator = new Validator()
    const result = await validator.validate(doc)
    t.same(result.errors, undefined, 'no validation errors')
    t.ok(result.valid)
    t.equal(validator.version, '3.1')
  })

  t.test('every $ref resolves in the document', async (t) => {
    const refs = new Set<string>()
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk)
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) if (k === '$ref' && typeof x === 'string') refs.add(x); else walk(x)
      }
    }
    walk(doc)
    t.ok(refs.size > 0)
    for (const ref of refs) {
      t.match(ref, /^#\//, `${ref} is local`)
      const target = ref.slice(2).split('/').reduce<any>((node, key) => node?.[key], doc)
      t.ok(target, `${ref} resolves`)
    }
  })

  t.test('every operation with a REST route, with its contract', async (t) => {
    const byId = new Map<string, { method: string; path: string; op: any }>()
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) byId.set(op.operationId, { method, path, op })
    }
    const withRest = contracts.filter((c) => c.rest)
    t.same([...byId.keys()].sort(), withRest.map((c) => c.name).sort())
    for (const c of withRest) {
      const { method, path, op } = byId.get(c.name)!
      t.equal(method, c.rest!.method.toLowerCase(), `${c.name}: method`)
      t.equal(path, c.rest!.path.replace(/:([A-Za-z]+)/g, '{$1}'), `${c.name}: path`)
      const success = Object.keys(op.responses).filter((k) => /^2/.test(k))
      // one success response, plus the 202 of work accepted but not finished in time (a start)
      t.same(success, [String(c.rest!.status ?? (success[0] === '204' ? 204 : 200)), ...(c.rest!.pendingStatus ? ['202'] : [])], `${c.name}: its success responses`)
      if (c.rest!.pendingStatus) {
        t.same(Object.keys(op.responses['202'].headers).sort(), ['Location', 'Retry-After'], `${c.name}: a 202 says where and when to look`)
        t.same(op.responses['202'].content, op.responses[String(c.rest!.status)].content, `${c.name}: the 202 body is the same session`)
      }
      for (const status of ['400', '401', '403', 'default']) t.same(op.responses[status], { $ref: '#/components/responses/Error' }, `${c.name}: ${status} is the Error`)
    }
  })

  t.test('a route\'s success response is its contract output (io: output)', async (t) => {
    const create = contracts.find((c) => c.name === 'identity_create')!
    const op = doc.paths['/v1/identities'].post
    const expected = z.toJSONSchema(create.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>
    delete expected.$schema
    t.same(op.responses['201'].content['application/json'].schema, expected)
    t.equal(op.responses['201'].content['application/json'].schema.type, 'object')
    t.same(op.requestBody.content['application/json'].schema.required, ['name'])
    t.equal(op.requestBody.content['application/json'].schema.additionalProperties, false, 'unknown fields are refused')

    const del = doc.paths['/v1/identities/{identityId}'].delete
    t.same(del.responses['204'], { description: 'success, no content' }, 'a void output is a 204 without content')
    t.same(del.parameters.map((p: any) => [p.name, p.in, p.required]), [['identityId', 'path', true]])

    const list = doc.paths['/v1/sessions'].get
    t.equal(list.responses['200'].content['application/json'].schema.type, 'object')
    t.ok(list.parameters.every((p: any) => p.in === 'query'), 'a GET takes its input from the query')
  })
})
