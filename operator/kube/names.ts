// Object names on Kubernetes: ids such as nsess_AbC… are not DNS-1123 names, so the
// ResourceClient maps them at its boundary (lower-cased plus 8 hex digits of a hash; back
// through the nightjar.dev/id annotation). ownerReferences must carry the object name, or
// the garbage collector takes the owner as gone. Design: docs/operator.md#object-names
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
