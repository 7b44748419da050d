// Browser extensions an org uploads (a zip of an unpacked Manifest V3 extension), sees the
// permissions of, and an org admin trusts or not; a session names the ones it loads (REST
// and SDK at start, MCP through its identity's default). A sealed fill in a session with an
// extension not trusted is refused before anything is decrypted. Guide: docs/extensions.md
import { z } from 'zod'
import { defineContract } from './types.ts'
import { idParam, isoTime } from './fields.ts'
import { personText } from '../person-text.ts'

/** the zip's REST body limit: a 4 MiB zip in base64 with room to spare */
export const EXTENSION_UPLOAD_BODY_LIMIT = 6 * 1024 * 1024
/** how many extensions one session (or one identity's default) may load */
export const MAX_SESSION_EXTENSIONS = 10

export const extensionId = z.string().regex(/^next_[0-9A-Za-z]{1,40}$/, 'must be an extension id (next_…)')
export const extensionIds = z.array(extensionId).max(MAX_SESSION_EXTENSIONS).refine((a) => new Set(a).size === a.length, 'must not repeat an extension')

export const ExtensionView = z.object({
  id: z.string().describe('next_…'),
  name: z.string().describe('the manifest’s name'),
  version: z.string().describe('the manifest’s version'),
  description: z.string().nullable(),
  sha256: z.string().describe('hex SHA-256 of the zip as uploaded: what a trust decision is about (a new upload is a new id, untrusted)'),
  bytes: z.number().int().describe('the zip’s size'),
  permissions: z.array(z.string()).describe('the manifest’s permissions (tabs, storage, webRequest …)'),
  optionalPermissions: z.array(z.string()),
  hostPermissions: z.array(z.string()).describe('the manifest’s host_permissions: where its background may read and send'),
  contentScripts: z.array(z.object({
    matches: z.array(z.string()).describe('the pages its scripts run in: they read every field of those pages'),
    js: z.array(z.string()),
    css: z.array(z.string()),
    allFrames: z.boolean(),
  })),
  serviceWorker: z.string().nullable().describe('its background service worker’s file, if any'),
  trusted: z.boolean().describe('an org admin trusts it: a sealed fill may run in a session that loads it (and only trusted ones)'),
  trustDecidedBy: z.string().nullable(),
  trustDecidedAt: isoTime.nullable(),
  trustReason: z.string().nullable(),
  createdBy: z.string(),
  createdAt: isoTime,
})

const NOT_MCP = { mcp: false as const } // org settings: REST, the SDK and the console, never an agent's tool

export const extensionUpload = defineContract({
  name: 'extension_upload',
  ...NOT_MCP,
  description: 'Upload a browser extension: a zip (base64) of an unpacked Manifest V3 extension, manifest.json at its top; at most 4 MiB zipped, 8 MiB unpacked. It starts untrusted',
  scopes: ['sessions:write'],
  input: z.strictObject({
    zipBase64: z.string().min(4).max(EXTENSION_UPLOAD_BODY_LIMIT).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').describe('the zip, base64'),
  }),
  output: ExtensionView,
  rest: { method: 'POST', path: '/v1/extensions', status: 201, bodyLimit: EXTENSION_UPLOAD_BODY_LIMIT + 1024 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const extensionList = defineContract({
  name: 'extension_list',
  ...NOT_MCP,
  description: 'The org’s extensions, oldest first, with what each declares and whether it is trusted',
  scopes: ['sessions:write'],
  input: z.strictObject({}),
  output: z.object({ items: z.array(ExtensionView) }),
  rest: { method: 'GET', path: '/v1/extensions' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const extensionGet = defineContract({
  name: 'extension_get',
  ...NOT_MCP,
  description: 'One extension of the org: what it declares and whether it is trusted',
  scopes: ['sessions:write'],
  input: z.strictObject({ extensionId: idParam }),
  output: ExtensionView,
  rest: { method: 'GET', path: '/v1/extensions/:extensionId' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const extensionTrust = defineContract({
  name: 'extension_trust',
  ...NOT_MCP,
  description: 'Trust an extension or withdraw trust (org admins; audited). Sealed fills run only in sessions whose every extension is trusted at the moment of the fill',
  scopes: ['org:admin'],
  input: z.strictObject({
    extensionId: idParam,
    trusted: z.boolean(),
    reason: personText(z.string().max(300)).optional().describe('why, for the audit trail and the list'),
  }),
  output: ExtensionView,
  rest: { method: 'PUT', path: '/v1/extensions/:extensionId/trust' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const extensionDelete = defineContract({
  name: 'extension_delete',
  ...NOT_MCP,
  description: 'Delete an extension (org admins; audited). Sessions already running keep it loaded, and a sealed fill there is refused from now on',
  scopes: ['org:admin'],
  input: z.strictObject({ extensionId: idParam }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/extensions/:extensionId', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const identityExtensionsPut = defineContract({
  name: 'identity_extensions_put',
  ...NOT_MCP,
  description: 'Set the extensions a session bound to this identity loads when its start names none — the way an MCP session_start (whose inputs are fixed) loads extensions. An empty list clears it',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, extensions: extensionIds }),
  output: z.object({ identityId: z.string(), extensions: z.array(z.string()) }),
  rest: { method: 'PUT', path: '/v1/identities/:identityId/extensions' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const extensionContracts = [extensionUpload, extensionList, extensionGet, extensionTrust, extensionDelete, identityExtensionsPut] as const
