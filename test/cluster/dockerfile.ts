// "Images" for the test node (not a test file): there is no container runtime, so an image
// reference names one of the repository's Dockerfiles, and what a container would run is
// read from that Dockerfile's final stage — ENV, WORKDIR, USER, ENTRYPOINT and CMD — and
// run against the working tree (the files the image would have copied).
//   registry.example/nightjar-operator:0.1.0  →  docker/operator.Dockerfile
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface ImageConfig {
  /** the Dockerfile this image stands for */
  dockerfile: string
  /** short name: operator, api-server, browser-pod */
  name: string
  /** ENV of the final stage, in order (later wins) */
  env: [string, string][]
  entrypoint: string[]
  cmd: string[]
  workdir: string
  /** USER of the final stage: uid and gid when numeric */
  user?: { uid: number; gid?: number }
  /** a stable digest of the Dockerfile, for status.imageID */
  digest: string
}

export class ImageError extends Error {}

/** the repository image a reference stands for: last path segment, tag/digest off, `nightjar-` off */
export function imageName(ref: string): string {
  const last = ref.split('@')[0].split('/').pop() ?? ''
  return last.replace(/:[^:]*$/, '').replace(/^nightjar-/, '')
}

/** a Dockerfile's logical lines: comments dropped, `\` continuations joined */
function instructions(text: string): { op: string; rest: string }[] {
  const out: { op: string; rest: string }[] = []
  let cur = ''
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd()
    if (!cur && /^\s*#/.test(line)) continue
    if (cur && /^\s*#/.test(line)) continue // comment lines inside a continuation are skipped too
    if (line.endsWith('\\')) { cur += line.slice(0, -1) + ' '; continue }
    cur += line
    const m = /^\s*(\w+)\s*(.*)$/s.exec(cur)
    if (m) out.push({ op: m[1].toUpperCase(), rest: m[2].trim() })
    cur = ''
  }
  return out
}

/** exec form (JSON array) as is; shell form through /bin/sh -c, as Docker does */
function commandForm(rest: string): string[] {
  if (rest.startsWith('[')) {
    try {
      const v = JSON.parse(rest)
      if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v
    } catch { /* not JSON: Docker treats it as shell form too */ }
  }
  return ['/bin/sh', '-c', rest]
}

function unquote(s: string): string {
  if ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'"))) return s.slice(1, -1)
  return s
}

/** `ENV a=1 b="two words"` and the legacy `ENV a 1` */
function envPairs(rest: string): [string, string][] {
  if (!/^[\w.-]+=/.test(rest)) {
    const m = /^(\S+)\s+(.*)$/.exec(rest)
    return m ? [[m[1], m[2]]] : []
  }
  const out: [string, string][] = []
  for (const m of rest.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) out.push([m[1], unquote(m[2])])
  return out
}

export function parseDockerfile(text: string, base?: Omit<ImageConfig, 'dockerfile' | 'name' | 'digest'>): Omit<ImageConfig, 'dockerfile' | 'name' | 'digest'> {
  const ins = instructions(text)
  let start = 0
  ins.forEach((i, n) => { if (i.op === 'FROM') start = n })
  // a final stage FROM another of the repository's images starts from that image's config
  const cfg: Omit<ImageConfig, 'dockerfile' | 'name' | 'digest'> = base
    ? { env: [...base.env], entrypoint: [...base.entrypoint], cmd: [...base.cmd], workdir: base.workdir, ...(base.user ? { user: { ...base.user } } : {}) }
    : { env: [], entrypoint: [], cmd: [], workdir: '/' }
  for (const { op, rest } of ins.slice(start + 1)) {
    if (op === 'ENV') cfg.env.push(...envPairs(rest))
    else if (op === 'WORKDIR') cfg.workdir = rest.startsWith('/') ? rest : join(cfg.workdir, rest)
    else if (op === 'ENTRYPOINT') { cfg.entrypoint = commandForm(rest); cfg.cmd = [] } // Docker: ENTRYPOINT resets an inherited CMD
    else if (op === 'CMD') cfg.cmd = commandForm(rest)
    else if (op === 'USER') {
      const [u, g] = rest.split(':')
      if (/^\d+$/.test(u)) cfg.user = { uid: Number(u), gid: g && /^\d+$/.test(g) ? Number(g) : undefined }
    }
  }
  // tini is PID 1's helper in a container; here the node reaps and signals the process group itself
  const e = cfg.entrypoint
  if (e.length >= 1 && /(^|\/)tini$/.test(e[0])) cfg.entrypoint = e[1] === '--' ? e.slice(2) : e.slice(1)
  return cfg
}

const cache = new Map<string, ImageConfig>()

/** the image's config; throws ImageError (the kubelet's ErrImagePull) when no Dockerfile matches */
export function resolveImage(repoRoot: string, ref: string): ImageConfig {
  const name = imageName(ref)
  const dockerfile = join(repoRoot, 'docker', `${name}.Dockerfile`)
  if (!name || !/^[\w.-]+$/.test(name) || !existsSync(dockerfile)) {
    throw new ImageError(`image "${ref}": no docker/${name || '?'}.Dockerfile in the repository (the test node runs only the repository's images)`)
  }
  const text = readFileSync(dockerfile, 'utf8')
  const from = baseImage(text)
  const base = from && imageName(from) !== name && existsSync(join(repoRoot, 'docker', `${imageName(from)}.Dockerfile`)) ? resolveImage(repoRoot, from) : undefined
  const digest = createHash('sha256').update(text).update(base?.digest ?? '').digest('hex')
  const hit = cache.get(dockerfile)
  if (hit && hit.digest === digest) return hit
  const cfg: ImageConfig = { ...parseDockerfile(text, base), dockerfile, name, digest }
  cache.set(dockerfile, cfg)
  return cfg
}

/** the final stage's FROM, with `${ARG}` taken from the ARG defaults declared before it */
function baseImage(text: string): string | undefined {
  const args = new Map<string, string>()
  let from: string | undefined
  for (const { op, rest } of instructions(text)) {
    if (op === 'ARG') {
      const m = /^([\w.-]+)=(.*)$/.exec(rest)
      if (m) args.set(m[1], unquote(m[2]))
    } else if (op === 'FROM') from = rest.split(/\s+/)[0]
  }
  return from?.replace(/\$\{?([\w.-]+)\}?/g, (_, n: string) => args.get(n) ?? '')
}

/**
 * argv as Kubernetes builds it: `command` replaces ENTRYPOINT, `args` replaces CMD, and a
 * `command` without `args` drops the image's CMD.
 */
export function containerArgv(image: ImageConfig, command?: string[], args?: string[]): string[] {
  if (command?.length) return [...command, ...(args ?? [])]
  return [...image.entrypoint, ...(args?.length ? args : image.cmd)]
}
