// The chart's Gateway API HTTPRoute: rendered only when asked, valid against the v1 schema,
// covering every path the Ingresses cover and every public path the api-server serves,
// each kind of traffic on the rule with its timeout, and nothing internal routed. Requests
// are routed the way the HTTPRoute spec says a Gateway picks a match (gateway-api.ts).
import t, { type Test } from 'tap'
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute'
import { TUNNEL_PATH } from '../../api-server/tunnel-broker/broker.ts'
import { EGRESS_PATH } from '../../api-server/networks/egress-relay.ts'
import { REPLICA_DIAL_PATH } from '../../api-server/replicas/channel.ts'
import { CHART, find, FULL, helm, type Obj, render } from './render.ts'
import { ruleFor, standardChannelViolations, type RouteRequest } from './gateway-api.ts'

const ON = ['--set', 'gateway.httpRoute.enabled=true', '--set', 'gateway.httpRoute.parentRefs[0].name=public', '--set', 'gateway.httpRoute.parentRefs[0].namespace=gateways']
const WS = { upgrade: 'websocket', connection: 'Upgrade' }
const routeOf = (docs: Obj[]) => find(docs, 'HTTPRoute')[0]
const envOf = (docs: Obj[]) => Object.fromEntries(find(docs, 'Deployment', /api-server$/)[0].spec.template.spec.containers[0].env.map((e: Obj) => [e.name, e.value]))

/** the rule a request takes, with its backend and timeout, or undefined when the route does not take it */
function routed(route: Obj, req: RouteRequest) {
  const i = ruleFor(route, req)
  if (i === undefined) return undefined
  const rule = route.spec.rules[i]
  return { backends: rule.backendRefs.map((b: Obj) => `${b.name}:${b.port}`), timeout: rule.timeouts?.request as string | undefined }
}

t.test('[ISSUE-38] no HTTPRoute unless asked; asked, one valid gateway.networking.k8s.io/v1 HTTPRoute to the api-server Service', async (t) => {
  t.equal(find(render(t), 'HTTPRoute').length, 0, 'off by default')
  const docs = render(t, [...ON, '--set', 'gateway.httpRoute.hostnames[0]=agents.example.com'])
  const route = routeOf(docs)
  if (!route) return t.fail('no HTTPRoute rendered')
  t.equal(route.apiVersion, 'gateway.networking.k8s.io/v1', 'the v1 (standard channel) API')
  t.equal(route.metadata.namespace, 'nightjar', 'in the release namespace, beside the Service it sends to')
  t.doesNotThrow(() => new HTTPRoute(route as any).validate(), 'valid against the Gateway API v1 schema (@kubernetes-models/gateway-api)')
  t.same(standardChannelViolations(route), [], 'only standard-channel fields')
  t.same(route.spec.parentRefs, [{ name: 'public', namespace: 'gateways' }], 'attached to the Gateway named in the values')
  t.same(route.spec.hostnames, ['agents.example.com'])
  const svc = find(docs, 'Service', /-api-server$/)[0]
  const backends = new Set(route.spec.rules.flatMap((r: Obj) => r.backendRefs.map((b: Obj) => JSON.stringify(b))))
  t.same([...backends], [JSON.stringify({ name: svc.metadata.name, port: svc.spec.ports.find((p: Obj) => p.name === 'http').port })], 'every rule sends to the api-server Service on its http port')
  t.equal(envOf(docs).NIGHTJAR_BASE_URL, 'https://agents.example.com', 'the base URL (OAuth audience, discovery) is the route’s host name behind the TLS-terminating Gateway')
  const noHost = render(t, ON)
  t.notOk(routeOf(noHost)?.spec.hostnames, 'no host names: the route takes every host name of its listeners')
  t.match(envOf(noHost).NIGHTJAR_BASE_URL, /^http:\/\/nj-nightjar-api-server\.nightjar\.svc:80$/, 'and the base URL stays the in-cluster one (set apiServer.baseUrl)')
  const wildcardFirst = render(t, [...ON, '--set', 'gateway.httpRoute.hostnames[0]=*.example.com', '--set', 'gateway.httpRoute.hostnames[1]=agents.example.com'])
  t.equal(envOf(wildcardFirst).NIGHTJAR_BASE_URL, 'https://agents.example.com', 'a wildcard host name is never a base URL')
  const both = render(t, [...ON, '--set', 'gateway.httpRoute.hostnames[0]=new.example.com', '--set', 'ingress.enabled=true', '--set', 'ingress.host=old.example.com'])
  t.equal(find(both, 'Ingress').length, 2, 'the Ingresses stay beside the route (a migration runs both)')
  t.equal(envOf(both).NIGHTJAR_BASE_URL, 'http://old.example.com', 'with both on, the Ingress host stays the base URL until apiServer.baseUrl says otherwise')
})

t.test('[ISSUE-38] the route covers every path the Ingresses cover, to the same Service', async (t) => {
  for (const extra of [['--set', 'ingress.enabled=true', ...ON], ['-f', FULL]]) {
    const docs = render(t, extra)
    const route = routeOf(docs)
    const ingresses = find(docs, 'Ingress')
    t.equal(ingresses.length, 2, `${extra.includes(FULL) ? 'full values' : 'defaults'}: the main and the control Ingress`)
    if (!route) return t.fail('no HTTPRoute rendered')
    const svc = find(docs, 'Service', /-api-server$/)[0]
    for (const ing of ingresses) {
      for (const p of ing.spec.rules[0].http.paths) {
        const port = svc.spec.ports.find((sp: Obj) => sp.name === p.backend.service.port.name).port
        const want = [`${p.backend.service.name}:${port}`]
        // a WebSocket path is asked for with Upgrade, as a daemon asks for it
        const headers = p.path === TUNNEL_PATH ? WS : {}
        t.same(routed(route, { path: p.path, headers })?.backends, want, `${ing.metadata.name} ${p.pathType} ${p.path}`)
        if (p.pathType === 'Prefix') t.same(routed(route, { path: `${p.path}/below`, headers })?.backends, want, `${ing.metadata.name} ${p.path}/… (Prefix)`)
      }
    }
  }
})

t.test('[ISSUE-38] each public path the api-server serves takes the rule with the right timeout; internal paths are not routed', async (t) => {
  for (const [extra, consolePath, request, streams] of [[ON, '/console', '180s', '0s'], [['-f', FULL], '/admin', '5m', '1h']] as const) {
    const route = routeOf(render(t, [...extra]))
    if (!route) return t.fail('no HTTPRoute rendered')
    const requests: RouteRequest[] = [
      { path: '/v1/sessions', method: 'POST' }, { path: '/v1/sessions/nsess_1/navigate', method: 'POST' },
      { path: '/oauth/authorize' }, { path: '/oauth/token', method: 'POST' }, { path: '/oauth/register', method: 'POST' }, { path: '/oauth/device', method: 'POST' },
      { path: '/.well-known/oauth-authorization-server' }, { path: '/.well-known/oauth-protected-resource/mcp' },
      { path: '/openapi.json' }, { path: consolePath }, { path: `${consolePath}/login` }, { path: `${consolePath}/keys` },
    ]
    for (const req of requests) t.equal(routed(route, req)?.timeout, request, `${req.method ?? 'GET'} ${req.path}: a request that ends (${request})`)
    const streamed: RouteRequest[] = [
      { path: '/mcp', method: 'POST', headers: { accept: 'application/json, text/event-stream' } }, { path: '/mcp', headers: { accept: 'text/event-stream' } },
      { path: TUNNEL_PATH, headers: WS },
      { path: '/v1/sessions/nsess_1/cdp', headers: WS },
      { path: `${consolePath}/sessions/nsess_1/live`, headers: WS }, { path: `${consolePath}/share/live?t=x`, headers: WS },
    ]
    for (const req of streamed) t.equal(routed(route, req)?.timeout, streams, `${req.method ?? 'GET'} ${req.path}${req.headers?.upgrade ? ' (WebSocket)' : ''}: a stream (${streams})`)
    for (const path of [EGRESS_PATH, REPLICA_DIAL_PATH, '/metrics', '/healthz', '/readyz', '/v10', '/openapi.json.bak', '/ws/controller']) {
      t.equal(routed(route, { path, headers: WS }), undefined, `${path} is not routed`)
    }
  }
})

t.test('[ISSUE-38] timeouts: null leaves a rule to the implementation; durations and parent references are checked before anything renders', async (t) => {
  const route = routeOf(render(t, [...ON, '--set', 'gateway.httpRoute.timeouts.request=null', '--set', 'gateway.httpRoute.timeouts.streams=null']))
  t.same(route?.spec.rules.map((r: Obj) => r.timeouts), [undefined, undefined], 'no timeouts field (older Gateway API CRDs, before v1.2, have none)')
  const refused = (t: Test, args: string[], why: RegExp) => {
    const r = helm(t, ['template', 'nj', CHART, ...args])
    t.notOk(r.ok, `${args.filter((a) => a !== '--set').join(' ')} is refused`)
    t.match(r.out, why)
  }
  refused(t, ['--set', 'gateway.httpRoute.enabled=true'], /parentRefs.*minItems|parentRefs/)
  refused(t, [...ON, '--set', 'gateway.httpRoute.timeouts.request=3 minutes'], /timeouts\/request/)
  refused(t, [...ON, '--set', 'gateway.httpRoute.hostnames[0]=Agents.Example.com'], /hostnames/)
  refused(t, [...ON, '--set', 'gateway.httpRoute.parentRefs[0].bogus=1'], /additional properties 'bogus' not allowed/)
  refused(t, [...ON, '--set', 'gateway.httpRoute.bogus=1'], /additional properties 'bogus' not allowed/)
  refused(t, ['--set', 'gateway.bogus=1'], /additional properties 'bogus' not allowed/)
})
