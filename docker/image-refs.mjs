// The product images' names and refs, and what buildah holds of one: what the build
// (scripts/images.mjs) and the development cluster's import (devcluster/images.ts) both need,
// kept here beside the Dockerfiles so neither imports the other.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

export const IMAGE_NAMES = ['api-server', 'operator', 'browser-pod', 'browser-pod-cloak']
/** the chart's images.registry for these local images */
export const REGISTRY = 'localhost'
export const TAG = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
export const imageRef = (name) => `${REGISTRY}/nightjar-${name}:${TAG}`

/** the image's JSON as buildah sees it, or undefined when absent */
export function inspectImage(ref) {
  const r = spawnSync('buildah', ['inspect', '--type', 'image', ref], { encoding: 'utf8', maxBuffer: 64 << 20 })
  return r.status === 0 ? JSON.parse(r.stdout) : undefined
}
