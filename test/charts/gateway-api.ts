// Gateway API helpers for the chart tests (not a test file): which fields of an HTTPRoute the
// standard channel (gateway.networking.k8s.io/v1) has, and how a Gateway picks the rule of an
// HTTPRoute for a request — path and header matching with the precedence the HTTPRoute spec
// gives (an Exact path first, then the longest PathPrefix, then a method match, then the most
// header matches, then the most query-parameter matches; then the order of the rules).
type Obj = Record<string, any>

// The v1 standard channel's HTTPRoute fields the chart may use. Experimental fields (retry,
// sessionPersistence, cors, …) would be pruned or refused by a cluster on the standard CRDs.
const FIELDS: Record<string, string[]> = {
  spec: ['parentRefs', 'hostnames', 'rules'],
  parentRef: ['group', 'kind', 'namespace', 'name', 'sectionName', 'port'],
  rule: ['matches', 'filters', 'backendRefs', 'timeouts'],
  match: ['path', 'headers', 'queryParams', 'method'],
  path: ['type', 'value'],
  header: ['type', 'name', 'value'],
  timeouts: ['request', 'backendRequest'],
  backendRef: ['group', 'kind', 'name', 'namespace', 'port', 'weight'],
}

export function standardChannelViolations(route: Obj): string[] {
  const out: string[] = []
  const check = (what: string, obj: Obj | undefined, at: string) => {
    for (const k of Object.keys(obj ?? {})) if (!FIELDS[what].includes(k)) out.push(`${at}.${k}`)
  }
  check('spec', route.spec, 'spec')
  route.spec?.parentRefs?.forEach((p: Obj, i: number) => check('parentRef', p, `spec.parentRefs[${i}]`))
  route.spec?.rules?.forEach((r: Obj, i: number) => {
    const at = `spec.rules[${i}]`
    check('rule', r, at)
    check('timeouts', r.timeouts, `${at}.timeouts`)
    r.backendRefs?.forEach((b: Obj, j: number) => check('backendRef', b, `${at}.backendRefs[${j}]`))
    r.matches?.forEach((m: Obj, j: number) => {
      check('match', m, `${at}.matches[${j}]`)
      check('path', m.path, `${at}.matches[${j}].path`)
      m.headers?.forEach((h: Obj, k: number) => check('header', h, `${at}.matches[${j}].headers[${k}]`))
    })
  })
  return out
}

export interface RouteRequest { path: string; method?: string; headers?: Record<string, string> }

function pathMatches(match: Obj | undefined, path: string): { ok: boolean; exact: boolean; length: number } {
  const type = match?.type ?? 'PathPrefix'
  const value: string = match?.value ?? '/'
  if (type === 'Exact') return { ok: path === value, exact: true, length: value.length }
  if (type !== 'PathPrefix') throw new Error(`path match type ${type} is implementation-specific; the chart uses Exact and PathPrefix`)
  // a prefix matches whole path elements: /v1 matches /v1 and /v1/x, never /v10
  const prefix = value.replace(/\/+$/, '')
  return { ok: prefix === '' || path === prefix || path.startsWith(`${prefix}/`), exact: false, length: prefix.length }
}

function headersMatch(headers: Obj[] | undefined, req: RouteRequest): boolean {
  const sent = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
  return (headers ?? []).every((h) => {
    if ((h.type ?? 'Exact') !== 'Exact') throw new Error(`header match type ${h.type} is implementation-specific`)
    return sent[String(h.name).toLowerCase()] === h.value
  })
}

/** lexicographic: the first place the two keys differ decides */
function outranks(a: number[], b: number[]): boolean {
  const k = a.findIndex((v, n) => v !== b[n])
  return k >= 0 && a[k] > b[k]
}

/** the index of the rule a Gateway sends the request to, or undefined when no match takes it */
export function ruleFor(route: Obj, req: RouteRequest): number | undefined {
  let best: { rule: number; key: number[] } | undefined
  route.spec.rules.forEach((rule: Obj, i: number) => {
    for (const [j, m] of (rule.matches ?? [{}]).entries()) {
      const p = pathMatches(m.path, req.path.split('?')[0])
      if (!p.ok || !headersMatch(m.headers, req)) continue
      if (m.method && m.method !== (req.method ?? 'GET')) continue
      if (m.queryParams?.length) throw new Error('query-parameter matches are not modelled here')
      const key = [p.exact ? 1 : 0, p.length, m.method ? 1 : 0, m.headers?.length ?? 0, -i, -j]
      if (!best || outranks(key, best.key)) best = { rule: i, key }
    }
  })
  return best?.rule
}
