// The package check on its own (no server): entry paths that could leave the extension's
// folder or unpack differently elsewhere, the bounds held before inflating, and what the
// summary keeps of a manifest.
import t from 'tap'
import { strToU8, zipSync } from 'fflate'
import { entryPath, parseExtension, summarise, EXTENSION_MAX_ZIP_BYTES } from '../../../api-server/extensions/package.ts'

const reason = (fn: () => unknown) => {
  try {
    fn()
    return 'accepted'
  } catch (e) {
    return (e as { reason?: string }).reason ?? 'threw'
  }
}
const manifest = strToU8(JSON.stringify({ manifest_version: 3, name: 'X', version: '1.2.3' }))

t.test('[ISSUE-51] entry paths: plain relative paths only', async (t) => {
  t.equal(entryPath('content/script.js'), 'content/script.js')
  t.equal(entryPath('icons/'), null, 'a folder entry is no file (the files inside it make it)')
  for (const bad of ['../', '../x.js', 'a/../../x.js', '/etc/passwd', 'C:/x.js', 'a\\b.js', 'a//b.js', './x.js', 'a/./b.js', 'x\u0000.js', 'x\n.js']) {
    t.equal(reason(() => entryPath(bad)), 'extension_invalid', JSON.stringify(bad))
  }
})

t.test('[ISSUE-51] the zip: duplicates by case, file count, and sizes bounded', async (t) => {
  const dup = zipSync({ 'manifest.json': manifest, 'A.js': strToU8('1'), 'a.js': strToU8('2') })
  t.throws(() => parseExtension(dup), { reason: 'extension_invalid', message: /two entries have the same path/ }, 'two paths that differ only in case')
  // the same name twice: a zip fflate writes cannot hold it, so the second entry is renamed in place
  const twice = zipSync({ 'manifest.json': manifest, 'a.js': strToU8('1'), 'b.js': strToU8('2') })
  const renamed = Buffer.from(twice).toString('latin1').replaceAll('b.js', 'a.js')
  t.throws(() => parseExtension(Buffer.from(renamed, 'latin1')), { reason: 'extension_invalid', message: /two entries have the same path/ }, 'two entries of one name (the later would win unseen)')
  const many = zipSync(Object.fromEntries([['manifest.json', manifest], ...Array.from({ length: 501 }, (_, i) => [`f${i}.txt`, strToU8('x')])]))
  t.equal(reason(() => parseExtension(many)), 'extension_invalid', 'more than 500 files')
  t.equal(reason(() => parseExtension(new Uint8Array(EXTENSION_MAX_ZIP_BYTES + 1))), 'extension_too_large', 'a zip over 4 MiB, before it is read')
  const ok = parseExtension(zipSync({ 'manifest.json': manifest, icons: { 'a.png': new Uint8Array([1, 2]) }, empty: {} }))
  t.same(ok.files.map((f) => f.path).sort(), ['icons/a.png', 'manifest.json'], 'folder entries are not files')
  t.match(ok.sha256, /^[0-9a-f]{64}$/)
})

t.test('[ISSUE-51] the manifest: MV3, its shape, and what the summary shows', async (t) => {
  t.equal(reason(() => summarise({ manifest_version: 3, name: 'X', version: 'v1' })), 'extension_invalid', 'a version Chromium refuses')
  t.equal(reason(() => summarise({ manifest_version: 3, name: 'X', version: '1', permissions: 'tabs' })), 'extension_invalid', 'permissions not a list')
  t.equal(reason(() => summarise([])), 'extension_invalid', 'not an object')
  t.same(summarise({
    manifest_version: 3, name: ' Helper ', version: '2.0', permissions: ['storage'], host_permissions: ['https://*.example.com/*'],
    content_scripts: [{ matches: ['https://app.example.com/*'], css: ['s.css'] }], background: { service_worker: 'bg.js' },
  }), {
    name: 'Helper', version: '2.0', description: null, permissions: ['storage'], optionalPermissions: [], hostPermissions: ['https://*.example.com/*'],
    contentScripts: [{ matches: ['https://app.example.com/*'], js: [], css: ['s.css'], allFrames: false }], serviceWorker: 'bg.js',
  })
  const withBom = zipSync({ 'manifest.json': strToU8('\uFEFF' + JSON.stringify({ manifest_version: 3, name: 'B', version: '1' })) })
  t.equal(parseExtension(withBom).summary.name, 'B', 'a byte-order mark, as editors write one, is read past')
  const missingWorker = zipSync({ 'manifest.json': strToU8(JSON.stringify({ manifest_version: 3, name: 'W', version: '1', background: { service_worker: 'bg.js' } })) })
  t.equal(reason(() => parseExtension(missingWorker)), 'extension_invalid', 'the service worker the manifest names must be there')
})
