// /openapi.json (OpenAPI 3.1) generated from the operation registry: per route its
// parameters and request body from the input schema, its success response from the
// output schema (io: 'output', what the REST door checks bodies against with
// checkOutput; a z.void() output is a 204 without content) and its error responses,
// all of the one Error shape.
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { AnyOperation } from '../operations/types.ts'
import { isNoContent } from '../../contracts/operations/types.ts'
import { pathParams } from './operations.ts'
import { PRODUCT_VERSION } from '../../contracts/version.ts'

type JsonSchema = Record<string, unknown>

/** A schema object for the document: JSON Schema 2020-12, OpenAPI 3.1's dialect, so no $schema of its own. */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema
  delete json.$schema
  return json
}

const ERROR = { $ref: '#/components/responses/Error' }

export function openApiDocument(ops: readonly AnyOperation[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const op of ops) {
    if (!op.rest) continue
    const { method, path } = op.rest
    const oaPath = path.replace(/:([A-Za-z]+)/g, '{$1}')
    const params = pathParams(path)
    const hasBody = method !== 'GET' && method !== 'DELETE'
    // the input's fields but the path's, closed as the input is (unknown fields are refused)
    const input = schemaOf(op.input, 'input')
    const properties = { ...(input.properties as Record<string, JsonSchema>) }
    for (const p of params) delete properties[p]
    const required = ((input.required as string[] | undefined) ?? []).filter((k) => !params.includes(k))
    const fields: JsonSchema = { ...input, properties, required }
    if (!required.length) delete fields.required
    const parameters = [
      ...params.map((name) => ({ name, in: 'path', required: true, schema: (input.properties as Record<string, JsonSchema>)[name] ?? { type: 'string' } })),
      ...(hasBody ? [] : Object.entries(properties).map(([name, schema]) => ({ name, in: 'query', required: required.includes(name), schema }))),
    ]
    const noContent = isNoContent(op)
    const status = String(op.rest.status ?? (noContent ? 204 : 200))
    paths[oaPath] ??= {}
    paths[oaPath][method.toLowerCase()] = {
      operationId: op.name,
      summary: op.description,
      security: [{ bearer: op.scopes }],
      'x-required-scopes': op.scopes,
      parameters,
      ...(hasBody && Object.keys(properties).length ? { requestBody: { required: true, content: { 'application/json': { schema: fields } } } } : {}),
      responses: {
        [status]: noContent
          ? { description: 'success, no content' }
          : { description: 'success', content: { 'application/json': { schema: schemaOf(op.output, 'output') } } },
        ...(op.rest.pendingStatus ? {
          [String(op.rest.pendingStatus)]: {
            description: 'accepted, not finished yet: the same body (status pending); poll Location after Retry-After seconds',
            headers: { Location: { schema: { type: 'string' } }, 'Retry-After': { schema: { type: 'integer' } } },
            content: { 'application/json': { schema: schemaOf(op.output, 'output') } },
          },
        } : {}),
        '400': ERROR,
        '401': ERROR,
        '403': ERROR,
        default: ERROR,
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Nightjar API', version: PRODUCT_VERSION },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'njk_ API key or njo_ OAuth access token' } },
      responses: {
        Error: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      schemas: {
        Error: {
          type: 'object', required: ['error'],
          properties: {
            error: {
              type: 'object', required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, reason: { type: 'string' } },
            },
          },
        },
      },
    },
  }
}

export function registerOpenApi(app: FastifyInstance, ops: readonly AnyOperation[], baseUrl: string) {
  const doc = openApiDocument(ops, baseUrl)
  app.get('/openapi.json', async () => doc)
}
