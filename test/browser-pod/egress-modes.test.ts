// Chromium through the egress gateway in local and split modes. The daemon tunnel is
// stood in for by a dialer that connects on "the developer's machine" (loopback here)
// and hands back a plain Duplex, so this proves the pod side only: which requests the
// browser may make, and which go through the tunnel.
import t, { type Test } from 'tap'
import net from 'node:net'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import type { ApiError } from '../../contracts/errors.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { fails, fakeTunnel, inProcessSandbox, loopbackServer, newToken, publicAliases } from './harness.ts'


async function pod(t: Test, mode: 'local' | 'split', declaredHosts: string[], aliases: Record<string, string>) {
  const token = newToken()
  const tunnel = fakeTunnel()
  const p = await startPod({ token, hostAliases: aliases, tunnel, sandbox: inProcessSandbox() })
  t.teardown(() => p.close())
  const client = new PodClient(p.endpoint, token)
  t.teardown(() => client.close())
  await client.configure({ sessionId: `nsess_${mode}`, egress: { mode, declaredHosts } })
  return { client, tunnel }
}

t.test('egress modes with real Chromium', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = publicAliases(web.ip)
  const local = await loopbackServer(t, 'developer app')
  const closedPort = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

  t.test('local: declared hosts through the tunnel, nothing else', async (t) => {
    const { client, tunnel } = await pod(t, 'local', [`localhost:${local.port}`, `localhost:${closedPort}`], aliases)
    const ok = await client.drive('navigate', { url: `http://localhost:${local.port}/` })
    t.same(ok, { url: `http://localhost:${local.port}/`, title: 'developer app', status: 200 })
    t.ok(tunnel.dials.includes(`localhost:${local.port}`), 'the browser reached it through the tunnel')

    for (const url of ['http://example.com/', 'https://example.com/', `http://127.0.0.1:${local.port}/`]) {
      const e = await fails(client.drive('navigate', { url }))
      t.equal(e.status, 403, url)
      t.equal(e.code, 'E_REACHABILITY_DENIED', 'an undeclared host is denied')
      t.equal(e.reason, 'host_not_declared')
    }
    t.notOk(tunnel.dials.some((d) => d.startsWith('example.com') || d.startsWith('127.0.0.1')), 'undeclared hosts are never dialed')

    const dead = await fails(client.drive('navigate', { url: `http://localhost:${closedPort}/` }))
    t.equal(dead.code, 'E_UPSTREAM', 'declared but nothing listening')
    t.equal(dead.reason, 'NAVIGATION_FAILED')
    t.match(dead.message, /net::ERR_CONNECTION_REFUSED/)
  })

  t.test('split: public direct, declared local through the tunnel, undeclared local denied', async (t) => {
    const { client, tunnel } = await pod(t, 'split', [`localhost:${local.port}`], aliases)
    t.match(await client.drive('navigate', { url: 'http://example.com/' }), { title: 'Nightjar test home', status: 200 })
    t.same(tunnel.dials.filter((d) => d.startsWith('example.com')), [], 'public web goes direct')
    t.match(await client.drive('navigate', { url: `http://localhost:${local.port}/` }), { title: 'developer app' })
    t.ok(tunnel.dials.includes(`localhost:${local.port}`))
    const e = await fails(client.drive('navigate', { url: `http://127.0.0.1:${local.port}/` }))
    t.equal(e.code, 'E_REACHABILITY_DENIED', 'a local address must be declared in the form navigated to')
    const meta = await fails(client.drive('navigate', { url: 'http://169.254.169.254/' }))
    t.equal(meta.reason, 'deny_floor')
  })
})
