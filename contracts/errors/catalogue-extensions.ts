// Errors of browser extensions (docs/extensions.md): a package refused at upload, a start
// that cannot load what it names, and the sealed fill refused in a session whose
// extensions an org admin has not all trusted. An unknown or another org's extension is
// the one 404, errors.notFound('extension').
import type { ApiEntry } from './entry.ts'

export const EXTENSION_ERRORS = {
  extensionInvalid: {
    status: 400, code: 'bad_request', reason: 'extension_invalid', args: ['why'], spec: null,
    message: (why: string) => `extension package refused: ${why}`,
    when: 'uploading a package that is not a zip of an unpacked Manifest V3 extension: unreadable, an entry outside its folder (.., absolute, backslashes), duplicate paths, too many files, no manifest.json at the top, not manifest_version 3, or a file the manifest names missing',
  },
  extensionTooLarge: {
    status: 413, code: 'payload_too_large', reason: 'extension_too_large', args: ['max'], spec: null,
    message: (max: number) => `extension package is larger than the limit (${max} bytes zipped, twice that unpacked)`,
    when: 'uploading a zip over 4 MiB, or one whose files unpack to more than 8 MiB (checked before they are inflated)',
  },
  tooManyExtensions: {
    status: 409, code: 'conflict', reason: 'too_many_extensions', args: ['max'], spec: null,
    message: (max: number) => `the org already has its limit of ${max} extensions: delete one first`,
    when: 'uploading an extension when the org holds 50 already',
  },
  extensionsNeedChromium: {
    status: 400, code: 'bad_request', reason: 'extensions_need_chromium', spec: null,
    message: 'extensions run in browserKind chromium only (a cloak browser loads none)',
    when: 'a session start naming extensions (or binding an identity that names some) with browserKind cloak',
  },
  extensionsUnsupported: {
    status: 503, code: 'unavailable', reason: 'extensions_unsupported', spec: null,
    message: 'this browser pod runs the headless shell, which has no extension system: extensions need the full Chromium (docs/extensions.md)',
    when: 'at the pod: loading extensions into a pod whose browser is chromium-headless-shell (the default browser-pod image); the start fails',
  },
  extensionUntrusted: {
    status: 403, code: 'forbidden', reason: 'extension_untrusted', args: ['ids'], spec: null,
    message: (ids: string) => `sealed fill refused: this session loads extensions an org admin has not trusted (${ids}); an extension's content script can read what a fill types. Nothing was decrypted`,
    when: 'credential_fill (or a free-text credential fill) in a session that loads an extension not marked trusted now (never trusted, trust withdrawn, or deleted); refused before the credential is looked up or decrypted, audited as credential.extension_denied',
  },
} as const satisfies Record<string, ApiEntry>
