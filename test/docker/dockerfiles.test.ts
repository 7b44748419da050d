// The Dockerfiles cannot be built here (no Docker engine), so their checkable promises are
// checked statically: a base image pinned by full version, a numeric non-root user, tini
// as PID 1, Debian chromium in the browser-pod image, and — the mistake a build would
// otherwise reveal only at run time — each image's COPY list is exactly what its entry
// point imports: every source file reached is COPY'd, and nothing is COPY'd that no
// entry reaches (an operator image without the api-server's sessions code, a browser
// pod without the api-server and the operator). Each .dockerignore is an allowlist of
// the same paths, so the build context holds nothing else either.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import t from 'tap'
import { ROOT } from '../operator/kube/helpers.ts'

/**
 * entries: what the image runs. The api-server image runs every `nightjar` command (the
 * CLI dispatcher's dynamic imports are followed); the operator image only `nightjar
 * operator`, so the dispatcher's other commands are not (its command file is an entry).
 * Every other dynamic import is followed: browser-pod/main.ts loads the pod that way.
 */
const IMAGES = {
  'api-server': { entries: ['bin/nightjar.mjs'], dispatcherOnly: false },
  operator: { entries: ['bin/nightjar.mjs', 'cli/operator.ts'], dispatcherOnly: true },
  'browser-pod': { entries: ['browser-pod/main.ts'], dispatcherOnly: false },
} as const
const DISPATCHER = 'cli/main.ts'
/** in every image besides the sources (installed from the lock file by the deps stage) */
const PACKAGE_FILES = ['package.json', 'package-lock.json']

// `import … from`/`export … from` (not `import type`/`export type`: erased at run time),
// side-effect imports, and import('…')
const STATIC = /(?:^|[\n;])\s*(?:import|export)(\s+type\b)?[^'"();]*?from\s+['"](\.[^'"]+)['"]|(?:^|[\n;])\s*import\s+['"](\.[^'"]+)['"]/g
const DYNAMIC = /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g

/** repository files reachable from the entries through relative imports */
function reachable(entries: readonly string[], dispatcherOnly: boolean): string[] {
  const seen = new Set<string>()
  const walk = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const src = readFileSync(file, 'utf8')
    const targets = [...src.matchAll(STATIC)].filter((m) => !m[1]).map((m) => m[2] ?? m[3])
    if (!(dispatcherOnly && relative(ROOT, file) === DISPATCHER)) targets.push(...[...src.matchAll(DYNAMIC)].map((m) => m[1]))
    for (const spec of targets) {
      const target = resolve(dirname(file), spec)
      if (existsSync(target)) walk(target)
    }
  }
  for (const e of entries) walk(resolve(ROOT, e))
  return [...seen].map((f) => relative(ROOT, f)).sort()
}

const covers = (source: string, file: string) => file === source || file.startsWith(`${source}/`)

for (const [image, { entries, dispatcherOnly }] of Object.entries(IMAGES)) {
  t.test(`docker/${image}.Dockerfile`, async (t) => {
    const text = readFileSync(`${ROOT}docker/${image}.Dockerfile`, 'utf8')
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1]
    t.match(base, /^node:\d+\.\d+\.\d+-bookworm-slim$/, 'base image pinned by full version tag')
    t.match(base, /^node:24\./, 'Node 24 LTS (Node 20 reached end of life in April 2026)')
    t.ok(text.split('\n').filter((l) => l.startsWith('FROM ')).every((l) => l.startsWith('FROM ${NODE_IMAGE}')), 'every stage uses the pinned base')
    t.match(text, /^USER 10001:10001$/m, 'numeric non-root user (matches runAsUser in the manifests)')
    t.match(text, /^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m, 'tini as PID 1')
    t.match(text, /npm ci --omit=dev/, 'production dependencies from the lock file')
    if (image === 'browser-pod') t.match(text, /apt-get install[^\n]*\\\n\s+chromium/, 'Debian chromium')

    const copies = [...text.matchAll(/^COPY (?!--from)(\S+) \.\/(\S*)$/gm)].map((m) => ({ source: m[1].replace(/\/$/, ''), dest: m[2].replace(/\/$/, '') }))
    for (const { source, dest } of copies) {
      t.ok(existsSync(`${ROOT}${source}`), `COPY ${source} exists`)
      // under /app at its repository path (imports are relative): `./<same path>`, or `../charts/` for a top-level file
      t.ok(dest === source || (dest === '' && !source.includes('/') && statSync(`${ROOT}${source}`).isFile()), `COPY ${source} keeps its path`)
    }
    const sources = copies.map((c) => c.source).filter((c) => !PACKAGE_FILES.includes(c))
    const files = reachable(entries, dispatcherOnly)
    t.same(files.filter((f) => !sources.some((c) => covers(c, f))), [], 'every imported source file is in the image')
    t.same(sources.filter((c) => !files.some((f) => covers(c, f))), [], 'nothing is in the image that its entry point does not import')
    if (image === 'browser-pod') t.same(files.filter((f) => /^(api-server|operator)\//.test(f)), [], 'the pod imports nothing of the api-server or the operator')
    if (image === 'operator') {
      t.same(files.filter((f) => f.startsWith('browser-pod/')), [], 'the operator imports nothing of the browser pod')
      // warm resume arrives opened (a Secret the api-server writes): no database, no KMS here
      t.same(files.filter((f) => f.startsWith('api-server/')), [], 'the operator imports nothing of the api-server')
    }

    const ignore = `${ROOT}docker/${image}.Dockerfile.dockerignore`
    t.ok(existsSync(ignore), 'its own .dockerignore')
    const lines = readFileSync(ignore, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    t.equal(lines[0], '*', '.dockerignore is an allowlist')
    t.same(lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1)).sort(), [...PACKAGE_FILES, ...sources].sort(), '.dockerignore lets in exactly what is COPY\'d')
    const last = (pattern: string) => lines.lastIndexOf(pattern) > Math.max(...lines.map((l, i) => (l.startsWith('!') ? i : -1)))
    for (const never of ['**/node_modules', '**/.env', '**/*.pem', '**/*.key']) t.ok(last(never), `${never} stays out, even inside what is let in`)
  })
}
