// The tunnel's series move with the tunnel: a real broker, an in-process
// daemon over a real WebSocket and a local echo server; the series read from a Prometheus
// registry as /metrics renders them.
import t from 'tap'
import client from 'prom-client'
import { registerProductMetrics } from '../../../api-server/metrics/product.ts'
import { createTestDb } from '../../helpers/db.ts'
import { parseScrape } from '../../helpers/prometheus.ts'
import { waitFor } from '../../helpers/wait.ts'
import { daemonOnline, pattern, readAll, startBroker, startEcho, NETWORK_ID } from '../../tunnel/fixtures/harness.ts'

t.test('[ISSUE-38] tunnel bytes, streams and daemons are counted', async (t) => {
  const testDb = await createTestDb(t)
  const h = await startBroker({ dialTimeoutMs: 1000 })
  t.teardown(() => h.close())
  const registry = new client.Registry()
  registerProductMetrics(registry, { db: testDb.db, tunnel: h.broker })
  const scrape = async () => parseScrape(await registry.metrics())

  const empty = await scrape()
  t.equal(empty.value('nightjar_tunnel_daemons_connected'), 0)
  const { d } = await daemonOnline(h)
  const echo = await startEcho()
  t.teardown(() => echo.close())
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  await waitFor(() => d.lines.some((l) => l.startsWith('declared hosts: 127.0.0.1')), { what: 'the declared hosts at the daemon' })

  const before = await scrape()
  t.equal(before.value('nightjar_tunnel_daemons_connected'), 1, 'one daemon connected')
  const stream = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  const open = await scrape()
  t.equal(open.value('nightjar_tunnel_streams_open'), 1, 'one stream open')
  const payload = pattern(200_000, 7)
  stream.end(payload)
  t.ok((await readAll(stream)).equals(payload), 'the bytes went to the echo server and back')
  const after = await scrape()
  const moved = (labels: Record<string, string>) => after.value('nightjar_tunnel_bytes_total', labels) - before.value('nightjar_tunnel_bytes_total', labels)
  t.ok(moved({ direction: 'out' }) >= payload.length, `bytes out to the daemon counted (${moved({ direction: 'out' })})`)
  t.ok(moved({ direction: 'in' }) >= payload.length, `bytes in from the daemon counted (${moved({ direction: 'in' })})`)
  t.equal(after.value('nightjar_tunnel_streams_total', { outcome: 'opened' }) - before.value('nightjar_tunnel_streams_total', { outcome: 'opened' }), 1, 'one stream opened')

  await t.rejects(h.broker.dial(NETWORK_ID, 'localhost', echo.port), { code: 'not_declared' })
  const refused = await scrape()
  t.equal(refused.value('nightjar_tunnel_streams_total', { outcome: 'not_declared' }) - after.value('nightjar_tunnel_streams_total', { outcome: 'not_declared' }), 1, 'a refused open counted by its code')

  const counted = refused.value('nightjar_tunnel_bytes_total')
  await d.stop()
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 0, { what: 'the daemon gone' })
  // the list drops a daemon when its socket closes, the gauge once the close is handled
  const gone = await waitFor(async () => { const m = await scrape(); return m.value('nightjar_tunnel_daemons_connected') === 0 ? m : null }, { what: 'the daemons gauge to fall' })
  t.equal(gone.value('nightjar_tunnel_daemons_connected'), 0, 'no daemon connected')
  t.ok(gone.value('nightjar_tunnel_bytes_total') >= counted, 'a closed connection\'s bytes stay counted')
})
