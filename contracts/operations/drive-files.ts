// Driving actions: files in the session. file_put puts a file in over REST, file_upload
// sets it into an <input type=file>, the pages' downloads are kept too; file_list and
// file_read read them back. The files live in the pod and go with it. Appended to
// driveContracts, so each needs its pod action (browser-pod/actions/files.ts) and its
// journal row (api-server/operations/sessions/drive-files.ts).
import { z } from 'zod'
import { defineDrive, type DriveContract } from './drive-kit.ts'
import { ONE_TARGET, TARGET_HELP, elementRef, oneTarget, selector, sessionId } from './fields.ts'

const MiB = 1024 * 1024

/** The largest file a session keeps (a put over it is refused; a download over it is cancelled and recorded as refused). */
export const FILE_MAX_BYTES = 10 * MiB
/** How many files a session keeps, uploads and downloads together (refused downloads are listed but not counted). */
export const FILE_MAX_COUNT = 20
/** The most bytes one file_read returns; read a larger file in parts with offset. */
export const FILE_READ_MAX_BYTES = 5 * MiB
/** file_put's REST body limit: a FILE_MAX_BYTES file in base64 with room to spare (the server's own limit is 1 MB). */
export const FILE_PUT_BODY_LIMIT = 15 * MiB

const LIMITS = `at most ${FILE_MAX_COUNT} files per session, ${FILE_MAX_BYTES / MiB} MiB each`

// --- fields and results --------------------------------------------------------------

const fileName = z.string().min(1).max(255)
  .regex(/^(?!\.\.?$)[^/\\\x00-\x1f\x7f]+$/, 'must be a file name (no path separator or control character, not . or ..)')
const mimeType = z.string().min(3).max(255).regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(;[ -~]*)?$/, 'must be a media type (type/subtype)')
const base64 = z.string().max(FILE_PUT_BODY_LIMIT).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')
/** A file named by its id, or by its name (the most recent file of that name). */
const fileRef = z.string().min(1).max(255).describe('a file id (nfile_…) or a file’s name (the most recent file of that name)')

export const FILE_SOURCES = ['upload', 'download'] as const
export const FILE_STATES = ['in_progress', 'complete', 'refused', 'failed'] as const

export const FileInfo = z.object({
  id: z.string(),
  name: z.string(),
  size: z.number().int().min(0).nullable().describe('bytes; for a refused download the size it had or announced; null while unknown'),
  mimeType: z.string(),
  source: z.enum(FILE_SOURCES).describe('upload: put over the API; download: a page downloaded it'),
  state: z.enum(FILE_STATES),
  reason: z.string().optional().describe('why a download was refused (too_large, too_many_files) or failed'),
  time: z.number().describe('epoch milliseconds: when it was put, or when the download began'),
})
export const FileListResult = z.object({ files: z.array(FileInfo) })
export const FileUploadResult = z.object({ ok: z.literal(true), url: z.string(), files: z.array(FileInfo) })
/** What an MCP client gets as structured content beside the file's bytes (an embedded resource). */
export const FileReadMeta = z.object({
  file: FileInfo,
  offset: z.number().int().min(0),
  bytes: z.number().int().min(0).describe('bytes returned'),
  eof: z.boolean().describe('true when the part returned ends the file'),
})
export const FileReadResult = FileReadMeta.extend({ contentBase64: z.string().describe('base64 of the bytes read') })

/** A drive contract whose REST route takes a larger body than the server's and answers 201. */
function withRest<C extends DriveContract>(c: C, rest: { bodyLimit: number; status: number }): C {
  return { ...c, rest: { ...c.rest!, ...rest } }
}

// --- the contracts -------------------------------------------------------------------

export const filePut = withRest(defineDrive({
  name: 'file_put',
  description: `Put a file into the session (content in base64) for file_upload to set into a page’s file input; ${LIMITS}. REST only (the body may be up to ${FILE_PUT_BODY_LIMIT / MiB} MiB)`,
  input: z.strictObject({ sessionId, name: fileName, contentBase64: base64, mimeType: mimeType.optional().describe('default: from the name’s extension, else application/octet-stream') }),
  output: FileInfo,
  restPath: 'files',
  mcp: false,
  pod: { path: '/v1/file_put' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
}), { bodyLimit: FILE_PUT_BODY_LIMIT, status: 201 })

export const fileUpload = defineDrive({
  name: 'file_upload',
  description: `Set files of the session (put with file_put, or downloaded) into an <input type=file>, by id or name; several need an input with the multiple attribute. The page sees each file’s name, size and type; ${LIMITS}. ${TARGET_HELP}`,
  input: z.strictObject({ sessionId, selector: selector.optional(), ref: elementRef.optional(), files: z.array(fileRef).min(1).max(FILE_MAX_COUNT) }).refine(oneTarget, ONE_TARGET),
  output: FileUploadResult,
  restPath: 'file-upload',
  pod: { path: '/v1/file_upload' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const fileList = defineDrive({
  name: 'file_list',
  description: `The session’s files: those put into it and those its pages downloaded (a download over the limits is listed as refused, with its reason); ${LIMITS}`,
  input: z.strictObject({ sessionId }),
  output: FileListResult,
  restPath: 'files',
  restMethod: 'GET',
  pod: { path: '/v1/file_list' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const fileRead = defineDrive({
  name: 'file_read',
  description: `Read a session file’s bytes (a download exactly as the page received it): at most ${FILE_READ_MAX_BYTES / MiB} MiB per call, from offset; eof says whether more follows`,
  input: z.strictObject({
    sessionId,
    fileId: fileRef,
    offset: z.coerce.number().int().min(0).max(FILE_MAX_BYTES).optional().describe('first byte to read (default 0)'),
    length: z.coerce.number().int().min(1).max(FILE_READ_MAX_BYTES).optional().describe(`bytes to read (default and most ${FILE_READ_MAX_BYTES})`),
  }),
  output: FileReadResult,
  mcpOutput: FileReadMeta,
  restPath: 'files/:fileId',
  restMethod: 'GET',
  pod: { path: '/v1/file_read', opaque: ['contentBase64'] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const fileContracts = [filePut, fileUpload, fileList, fileRead] as const
