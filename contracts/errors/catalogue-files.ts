// Errors of the toolbox: session files, uploads and downloads. An unknown
// file (or one of another session) is the one 404, errors.notFound('file').
import type { ApiEntry } from './entry.ts'

export const FILE_ERRORS = {
  rangeNotSatisfiable: {
    status: 416, code: 'range_not_satisfiable', reason: null, message: (size: number) => `range not satisfiable: the file is ${size} bytes`, args: ['size'], spec: null,
    when: 'a session video download whose Range starts past the file\'s end (Content-Range: bytes */size)',
  },
  fileTooLarge: {
    status: 413, code: 'payload_too_large', reason: 'file_too_large', message: (max: number) => `file is larger than the limit of ${max} bytes`, args: ['max'], spec: null,
    when: 'file_put with content over the per-file limit (FILE_MAX_BYTES)',
  },
  tooManyFiles: {
    status: 409, code: 'conflict', reason: 'too_many_files', message: (max: number) => `the session holds its limit of ${max} files`, args: ['max'], spec: null,
    when: 'file_put when the session already holds FILE_MAX_COUNT files (uploads and kept downloads together)',
  },
  fileNotReady: {
    status: 409, code: 'conflict', reason: 'file_not_ready', message: (state: string) => `file is ${state}, not complete`, args: ['state'], spec: null,
    when: 'file_read or file_upload of a download still in progress, refused or failed',
  },
  notAFileInput: {
    status: 400, code: 'bad_request', reason: 'not_a_file_input', message: 'target is not an <input type=file>', spec: null,
    when: 'file_upload whose selector matches an element that is not a file input',
  },
  fileCarriesSecret: {
    status: 403, code: 'forbidden', reason: 'file_carries_secret', message: 'the file holds a value filled with credential_fill; it is not returned', spec: ['INV-03'],
    when: 'file_read of a file in which the echo guard finds a filled secret (e.g. a page that saved the field into a download)',
  },
  pdfAfterFill: {
    status: 403, code: 'forbidden', reason: 'pdf_after_fill', message: 'no PDF is made of a session a credential was filled in', spec: ['INV-03'],
    when: 'pdf on a session after credential_fill: a PDF carries the page as text (its text layer, link targets, form fields, the title in its metadata), where a value the page echoes cannot be masked',
  },
  singleFileInput: {
    status: 400, code: 'bad_request', reason: 'single_file_input', message: 'the file input takes one file (it has no multiple attribute)', spec: null,
    when: 'file_upload of several files into an input without the multiple attribute',
  },
} as const satisfies Record<string, ApiEntry>
