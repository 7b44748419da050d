// The Dockerfiles cannot be built here (no Docker engine), so their checkable promises are
// checked statically: a base image pinned by full version, a numeric non-root user, tini
// as PID 1, Debian chromium in the browser-pod image, and — the mistake a build would
// otherwise reveal only at run time — every source file the image's entry point imports
// is COPY'd into it.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import t from 'tap'
import { ROOT } from './helpers.ts'

const IMAGES = {
  'api-server': { entries: ['bin/nightjar.mjs', 'cli/main.ts'], followDynamic: true },
  operator: { entries: ['bin/nightjar.mjs', 'cli/main.ts', 'cli/operator.ts'], followDynamic: false },
  'browser-pod': { entries: ['browser-pod/main.ts'], followDynamic: false },
} as const

/** repository files reachable from the entries through relative imports */
function reachable(entries: readonly string[], followDynamic: boolean): string[] {
  const seen = new Set<string>()
  const walk = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const src = readFileSync(file, 'utf8')
    const re = followDynamic
      ? /(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g
      : /(?:import|export)[^'"();]*?from\s+['"](\.[^'"]+)['"]/g
    for (const m of src.matchAll(re)) {
      const target = resolve(dirname(file), m[1] ?? m[2])
      if (existsSync(target)) walk(target)
    }
  }
  for (const e of entries) walk(resolve(ROOT, e))
  return [...seen].map((f) => relative(ROOT, f))
}

for (const [image, { entries, followDynamic }] of Object.entries(IMAGES)) {
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
    t.ok(existsSync(`${ROOT}docker/${image}.Dockerfile.dockerignore`), 'its own .dockerignore')

    const copied = [...text.matchAll(/^COPY (?!--from)(\S+) \.\/(\S*)$/gm)].map((m) => m[1].replace(/\/$/, ''))
    for (const c of copied) t.ok(existsSync(`${ROOT}${c}`), `COPY ${c} exists`)
    const missing = reachable(entries, followDynamic).filter((f) => !copied.some((c) => f === c || f.startsWith(`${c}/`)))
    t.same(missing, [], 'every imported source file is in the image')
  })
}
