// Object names on Kubernetes. Nightjar ids are base62 with a prefix (nsess_AbC…, nnet_…),
// and the resources are named after them, but a Kubernetes object name must be a DNS-1123
// subdomain: lower case, digits, '-' and '.'. The api-server refuses `nsess_AbC…` (422).
//
// So the Kubernetes ResourceClient maps names at its boundary, invisibly to reconcilers
// and to the api-server (both keep using ids as names, in both runtimes):
//   id → object name: the id lower-cased with other characters as '-', plus 8 hex
//        digits of its SHA-256 (two ids differing only in case stay distinct), e.g.
//        nsess_AbC1 → nsess-abc1-5d41402a; ids that are already valid names stay as is;
//   object name → id: the annotation nightjar.dev/id, written at create.
// The mapped name is readable in `kubectl get bs`; the id is in the annotation.
// ownerReferences must carry the *object* name: the garbage collector looks the owner up
// by name and treats an owner it cannot find as gone — deleting the dependents.
import { createHash } from 'node:crypto'

export const ID_ANNOTATION = 'nightjar.dev/id'

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && DNS_SUBDOMAIN.test(name)
}

export function kubeName(id: string): string {
  if (isDnsSubdomain(id)) return id
  const readable = id
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200)
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 8)
  return readable ? `${readable}-${hash}` : `x-${hash}`
}
