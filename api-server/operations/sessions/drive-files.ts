// The api-server's rows for the driving actions of contracts/operations/drive-files.ts:
// what the journal keeps of each (file names, ids and sizes — never a file's bytes),
// and how a file read reads over MCP (the bytes as an embedded resource, the rest as
// structured content, like the pdf tool).
import type { fileContracts } from '../../../contracts/operations/drive-files.ts'
import { nothing, type DriveSpecs } from './drive-spec.ts'

export const fileDrives: DriveSpecs<(typeof fileContracts)[number]['name']> = {
  file_put: { journal: (p) => ({ name: p.name, bytes: Buffer.byteLength(p.contentBase64, 'base64'), mimeType: p.mimeType }) },
  file_upload: { journal: (u) => ({ selector: u.selector, ref: u.ref, files: u.files }) },
  file_list: { journal: nothing },
  file_read: {
    journal: (r) => ({ file: r.fileId, offset: r.offset, length: r.length }),
    toMcp: ({ contentBase64, ...meta }) => ({
      content: [{ type: 'resource', resource: { uri: `nightjar://files/${meta.file.id}`, blob: contentBase64, mimeType: meta.file.mimeType } }],
      structuredContent: meta,
    }),
  },
}
