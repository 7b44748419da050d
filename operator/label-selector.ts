// Kubernetes label selectors (the string form of list/watch ?labelSelector=):
//   k=v  k==v  k!=v  k  !k  k in (a,b)  k notin (a,b)   — comma-separated, all must hold.
// The embedded store filters with it; the Kubernetes adapter just forwards the string.

type Requirement = (labels: Record<string, string>) => boolean

export function parseLabelSelector(selector: string | undefined): Requirement {
  if (!selector || !selector.trim()) return () => true
  const reqs = splitTopLevel(selector).map(parseRequirement)
  return (labels) => reqs.every((r) => r(labels))
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = []
  let depth = 0
  let cur = ''
  for (const ch of s) {
    if (ch === '(') depth++
    if (ch === ')') depth--
    if (ch === ',' && depth === 0) {
      parts.push(cur)
      cur = ''
    } else cur += ch
  }
  parts.push(cur)
  return parts.map((p) => p.trim()).filter(Boolean)
}

function parseRequirement(expr: string): Requirement {
  let m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(expr)
  if (m) {
    const [, key, op, list] = m
    const values = new Set(list.split(',').map((v) => v.trim()).filter(Boolean))
    return op === 'in' ? (l) => key in l && values.has(l[key]) : (l) => !(key in l) || !values.has(l[key])
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(expr)
  if (m) {
    const [, key, op, value] = m
    return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value
  }
  m = /^!\s*(\S+)$/.exec(expr)
  if (m) {
    const key = m[1]
    return (l) => !(key in l)
  }
  if (/^\S+$/.test(expr)) return (l) => expr in l
  throw new Error(`invalid label selector requirement: ${expr}`)
}
