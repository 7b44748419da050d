// An uploaded extension package: a zip of an unpacked Manifest V3 extension, read with
// fflate and refused whole unless every entry is a plain relative path, the sizes stay
// bounded (declared and inflated), and manifest.json is MV3. What it declares — permissions,
// host permissions, content scripts' matches — is what an admin sees before trusting it.
// Design: docs/extensions.md
import { createHash } from 'node:crypto'
import { unzipSync, type UnzipFileInfo } from 'fflate'
import { errors, isApiError } from '../../contracts/errors.ts'

/** the zip as uploaded */
export const EXTENSION_MAX_ZIP_BYTES = 4 * 1024 * 1024
/** every file unpacked, together (a zip bomb stops here, before it is inflated); in base64 it fits the pod API's 16 MiB body */
export const EXTENSION_MAX_UNPACKED_BYTES = 8 * 1024 * 1024
export const EXTENSION_MAX_FILES = 500

export interface ExtensionManifestSummary {
  name: string
  version: string
  description: string | null
  permissions: string[]
  optionalPermissions: string[]
  hostPermissions: string[]
  contentScripts: Array<{ matches: string[]; js: string[]; css: string[]; allFrames: boolean }>
  /** the background service worker's file, if any */
  serviceWorker: string | null
}

export interface ExtensionFile {
  path: string
  data: Uint8Array
}

export interface ParsedExtension {
  summary: ExtensionManifestSummary
  files: ExtensionFile[]
  sha256: string
}

const invalid = (why: string) => errors.extensionInvalid(why)

/**
 * An entry's name as a relative path inside the extension's folder, or null for a folder
 * entry. Anything that could land outside the folder, or that different unzip tools read
 * differently (backslashes, absolute paths, `..`, empty or dot segments, control
 * characters), refuses the package.
 */
export function entryPath(name: string): string | null {
  const folder = name.endsWith('/')
  if (folder) name = name.slice(0, -1)
  if (name === '') return null
  if (/[\\\u0000-\u001f\u007f]/.test(name) || name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw invalid('an entry has an absolute path or a forbidden character')
  const parts = name.split('/')
  if (parts.some((p) => p === '' || p === '.' || p === '..')) throw invalid('an entry’s path leaves the extension’s folder')
  if (name.length > 300) throw invalid('an entry’s path is longer than 300 characters')
  // a folder is checked like a file, and made by the files inside it
  return folder ? null : name
}

const strings = (v: unknown, field: string): string[] => {
  if (v === undefined) return []
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalid(`manifest.json: ${field} must be a list of strings`)
  return v as string[]
}

/** What the manifest declares, checked for the shape Chromium requires of an MV3 manifest. */
export function summarise(manifest: unknown): ExtensionManifestSummary {
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) throw invalid('manifest.json is not a JSON object')
  const m = manifest as Record<string, unknown>
  if (m.manifest_version !== 3) throw invalid('manifest_version must be 3 (Manifest V2 extensions do not run in current Chromium)')
  if (typeof m.name !== 'string' || !m.name.trim()) throw invalid('manifest.json: name is missing')
  if (typeof m.version !== 'string' || !/^\d{1,9}(\.\d{1,9}){0,3}$/.test(m.version)) throw invalid('manifest.json: version must be one to four dot-separated numbers')
  const scripts = m.content_scripts === undefined ? [] : m.content_scripts
  if (!Array.isArray(scripts)) throw invalid('manifest.json: content_scripts must be a list')
  const background = m.background as Record<string, unknown> | undefined
  if (background !== undefined && (typeof background !== 'object' || background === null)) throw invalid('manifest.json: background must be an object')
  const worker = background?.service_worker
  if (worker !== undefined && typeof worker !== 'string') throw invalid('manifest.json: background.service_worker must be a file name')
  return {
    name: m.name.trim().slice(0, 200),
    version: m.version,
    description: typeof m.description === 'string' ? m.description.slice(0, 500) : null,
    permissions: strings(m.permissions, 'permissions'),
    optionalPermissions: strings(m.optional_permissions, 'optional_permissions'),
    hostPermissions: strings(m.host_permissions, 'host_permissions'),
    contentScripts: scripts.map((s: unknown, i: number) => {
      if (!s || typeof s !== 'object') throw invalid(`manifest.json: content_scripts[${i}] must be an object`)
      const cs = s as Record<string, unknown>
      return { matches: strings(cs.matches, `content_scripts[${i}].matches`), js: strings(cs.js, `content_scripts[${i}].js`), css: strings(cs.css, `content_scripts[${i}].css`), allFrames: cs.all_frames === true }
    }),
    serviceWorker: typeof worker === 'string' ? worker : null,
  }
}

/** Reads and checks a package; refuses it (400 extension_invalid, 413 extension_too_large) with the reason. */
export function parseExtension(zip: Uint8Array): ParsedExtension {
  if (zip.byteLength > EXTENSION_MAX_ZIP_BYTES) throw errors.extensionTooLarge(EXTENSION_MAX_ZIP_BYTES)
  let declared = 0
  let count = 0
  const seen = new Set<string>()
  let entries: Record<string, Uint8Array>
  try {
    entries = unzipSync(zip, {
      // runs for every entry before it is inflated: the bounds hold before any memory is spent
      filter: (f: UnzipFileInfo) => {
        count++
        declared += f.originalSize
        if (count > EXTENSION_MAX_FILES) throw invalid(`more than ${EXTENSION_MAX_FILES} files`)
        if (declared > EXTENSION_MAX_UNPACKED_BYTES) throw errors.extensionTooLarge(EXTENSION_MAX_ZIP_BYTES)
        const path = entryPath(f.name)
        if (path === null) return false
        // two entries of one name (or differing only in case) unpack differently on different
        // file systems; checked here, since the record fflate returns keeps only the last of a name
        if (seen.has(path.toLowerCase())) throw invalid('two entries have the same path')
        seen.add(path.toLowerCase())
        return true
      },
    })
  } catch (e) {
    if (isApiError(e)) throw e
    throw invalid('not a readable zip file')
  }
  const files: ExtensionFile[] = []
  let inflated = 0
  for (const [name, data] of Object.entries(entries)) {
    const path = entryPath(name)!
    inflated += data.byteLength
    if (inflated > EXTENSION_MAX_UNPACKED_BYTES) throw errors.extensionTooLarge(EXTENSION_MAX_ZIP_BYTES)
    files.push({ path, data })
  }
  const manifestFile = files.find((f) => f.path === 'manifest.json')
  if (!manifestFile) throw invalid('manifest.json is not at the top of the zip (zip the extension’s folder’s contents, not the folder)')
  let manifest: unknown
  try {
    manifest = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(manifestFile.data).replace(/^\uFEFF/, ''))
  } catch {
    throw invalid('manifest.json is not valid JSON')
  }
  const summary = summarise(manifest)
  const paths = new Set(files.map((f) => f.path))
  for (const needed of [...summary.contentScripts.flatMap((c) => [...c.js, ...c.css]), ...(summary.serviceWorker ? [summary.serviceWorker] : [])]) {
    if (!paths.has(needed.replace(/^\.?\//, ''))) throw invalid('manifest.json names a file the zip does not hold')
  }
  return { summary, files, sha256: createHash('sha256').update(zip).digest('hex') }
}
