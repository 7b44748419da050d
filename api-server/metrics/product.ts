// The product's own Prometheus series, what a team alerts on (docs/observability.md lists
// each): events counted where they happen, states read on scrape, one set per process.
// Labels are fixed words (outcomes, catalogue reasons), never an id, an org, a host, a URL
// or a credential's name (the customer's words, unbounded).
import client from 'prom-client'

/** how long a start took, request to live: a warm start is under a second, a cold one several */
const START_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60, 120]

export const sessionStarts = new client.Counter({
  name: 'nightjar_session_starts_total',
  help: 'Session starts by outcome: live, failed (admitted, then the browser did not come up), refused (answered 4xx/429 before any browser)',
  labelNames: ['outcome'] as const,
  registers: [],
})
export const sessionStartSeconds = new client.Histogram({
  name: 'nightjar_session_start_duration_seconds',
  help: 'Seconds from a start request to its session being live (starts that went live)',
  buckets: START_BUCKETS,
  registers: [],
})
export const sessionFailures = new client.Counter({
  name: 'nightjar_session_failures_total',
  help: 'Sessions that failed (at start or while live), by reason: the operator\'s condition reason (PodFailed, OOMKilled, StartTimeout, NodeLost, NodeDrained …) or the start\'s error code',
  labelNames: ['reason'] as const,
  registers: [],
})
export const credentialFills = new client.Counter({
  name: 'nightjar_credential_fills_total',
  help: 'Sealed credential fills by outcome: ok, or the refusal\'s error reason or code (credential.origin_denied, credential.field_denied, grant_intersection, not_found …)',
  labelNames: ['outcome'] as const,
  registers: [],
})
export const oauthTokens = new client.Counter({
  name: 'nightjar_oauth_tokens_total',
  help: 'POST /oauth/token answers by grant type and outcome (issued, refused)',
  labelNames: ['grant_type', 'outcome'] as const,
  registers: [],
})

/** Counts the stream opens of the tunnel broker: opened, or failed (the daemon refused, timed out, was gone). */
export const tunnelStreams = new client.Counter({
  name: 'nightjar_tunnel_streams_total',
  help: 'Tunnel stream opens by outcome (opened, failed)',
  labelNames: ['outcome'] as const,
  registers: [],
})

const instruments: client.Metric[] = [sessionStarts, sessionStartSeconds, sessionFailures, credentialFills, oauthTokens, tunnelStreams]

/** A reason or outcome as a label: a fixed word (a code's constant), or `other` for anything else. */
export function boundedLabel(value: string | undefined): string {
  return value && /^[A-Za-z][A-Za-z0-9_.]{0,47}$/.test(value) ? value : 'other'
}

/** what is read on scrape: the database's waiting requests and the tunnel broker's counters */
export interface ProductMetricSources {
  db: { query(sql: string): Promise<{ rows: Record<string, unknown>[] }> }
  tunnel: { totals(): { bytesIn: number; bytesOut: number; streamsOpen: number; daemons: number } }
}

/** Registers the product series into the app's registry (the event instruments and the states read on scrape). */
export function registerProductMetrics(registry: client.Registry, sources: ProductMetricSources): void {
  for (const m of instruments) if (!registry.getSingleMetric((m as unknown as { name: string }).name)) registry.registerMetric(m)
  new client.Gauge({
    name: 'nightjar_credential_requests_waiting',
    help: 'Credential requests (credential_request) waiting for a person, across every org',
    registers: [registry],
    async collect() {
      const r = await sources.db.query(`select count(*)::int as n from credential_requests where completed_at is null and expires_at > now()`)
      this.set(Number(r.rows[0]?.n ?? 0))
    },
  })
  new client.Gauge({
    name: 'nightjar_human_requests_waiting',
    help: 'Live sessions whose agent asked for a person (request_human) and has not had control handed back yet, across every org',
    registers: [registry],
    async collect() {
      const r = await sources.db.query(`select count(*)::int as n from sessions where status = 'live' and human_requested_at is not null`)
      this.set(Number(r.rows[0]?.n ?? 0))
    },
  })
  new client.Counter({
    name: 'nightjar_tunnel_bytes_total',
    help: 'Bytes on the daemon tunnels of this replica, by direction (in: from daemons, out: to daemons), frames included',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      const t = sources.tunnel.totals()
      this.reset()
      this.inc({ direction: 'in' }, t.bytesIn)
      this.inc({ direction: 'out' }, t.bytesOut)
    },
  })
  new client.Gauge({
    name: 'nightjar_tunnel_streams_open',
    help: 'Streams open on the daemon tunnels of this replica',
    registers: [registry],
    collect() { this.set(sources.tunnel.totals().streamsOpen) },
  })
  new client.Gauge({
    name: 'nightjar_tunnel_daemons_connected',
    help: 'Daemons connected to this replica',
    registers: [registry],
    collect() { this.set(sources.tunnel.totals().daemons) },
  })
}

