// Prometheus metrics of session capacity: what is open, what waits for a browser, what was
// refused and why. Open sessions are counted in Postgres on scrape (every replica reports
// the deployment's numbers); starts in flight, queued and refused are this process's.
import client from 'prom-client'
import type { Db } from '../store/db.ts'
import type { Admission } from './admission.ts'

export function registerSessionMetrics(registry: client.Registry, services: { db: Db; admission: Admission }): void {
  new client.Gauge({
    name: 'nightjar_sessions_open', help: 'Sessions pending or live, by status', labelNames: ['status'], registers: [registry],
    async collect() {
      const r = await services.db.query(`select status, count(*)::int as n from sessions where status in ('pending', 'live') group by status`)
      this.reset()
      for (const status of ['pending', 'live']) this.set({ status }, r.rows.find((x) => x.status === status)?.n ?? 0)
    },
  })
  new client.Gauge({
    name: 'nightjar_session_starts_in_flight', help: 'Session starts holding a launch slot in this process', registers: [registry],
    collect() { this.set(services.admission.stats.inFlight) },
  })
  new client.Gauge({
    name: 'nightjar_session_starts_queued', help: 'Session starts waiting for a launch slot in this process', registers: [registry],
    collect() { this.set(services.admission.stats.queued) },
  })
  new client.Counter({
    name: 'nightjar_session_starts_refused_total', help: 'Session starts refused with 429, by reason', labelNames: ['reason'], registers: [registry],
    collect() {
      this.reset()
      for (const [reason, n] of Object.entries(services.admission.stats.refused)) this.inc({ reason }, n)
    },
  })
}
