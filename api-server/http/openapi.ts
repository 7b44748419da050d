// /openapi.json generated from the operation registry.
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { AnyOperation } from '../operations/types.ts'
import { pathParams } from './operations.ts'

export function openApiDocument(ops: readonly AnyOperation[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const op of ops) {
    if (!op.rest) continue
    const { method, path, status } = op.rest
    const oaPath = path.replace(/:([A-Za-z]+)/g, '{$1}')
    const params = pathParams(path)
    const shape = op.input.shape as Record<string, z.ZodType>
    const rest = Object.fromEntries(Object.entries(shape).filter(([k]) => !params.includes(k)))
    const hasBody = method !== 'GET' && method !== 'DELETE'
    const parameters = [
      ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...(hasBody ? [] : Object.keys(rest).map((name) => ({ name, in: 'query', required: false, schema: z.toJSONSchema(rest[name], { io: 'input', unrepresentable: 'any' }) }))),
    ]
    paths[oaPath] ??= {}
    paths[oaPath][method.toLowerCase()] = {
      operationId: op.name,
      summary: op.description,
      security: [{ bearer: op.scopes }],
      'x-required-scopes': op.scopes,
      parameters,
      ...(hasBody && Object.keys(rest).length
        ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(z.object(rest as z.ZodRawShape), { io: 'input', unrepresentable: 'any' }) } } } }
        : {}),
      responses: {
        [String(status ?? 200)]: { description: 'success' },
        default: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Nightjar API', version: '0.1.0' },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'njk_ API key or njo_ OAuth access token' } },
      schemas: {
        Error: {
          type: 'object', required: ['error'],
          properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, reason: { type: 'string' } } } },
        },
      },
    },
  }
}

export function registerOpenApi(app: FastifyInstance, ops: readonly AnyOperation[], baseUrl: string) {
  const doc = openApiDocument(ops, baseUrl)
  app.get('/openapi.json', async () => doc)
}
