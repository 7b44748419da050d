-- Up Migration
-- Webhooks (issue #39 item 2). An endpoint: where an org's events go and which ones, with
-- its signing secret sealed under the org's KMS data key (it must sign, so it is kept
-- sealed, not hashed; shown once at creation). An event: the exact JSON body every
-- endpoint is sent (a signature covers its bytes, so it is stored, not rebuilt). A
-- delivery: one event to one endpoint, written in the same transaction as the event,
-- before anything is sent, so a restart loses nothing; workers in every replica claim
-- due rows with FOR UPDATE SKIP LOCKED, pushing next_attempt_at forward as a lease while
-- they send.
create table webhook_endpoints (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  url text not null,
  events text[] not null,
  description text not null default '',
  secret_sealed text not null,
  created_by text not null,
  created_at timestamptz not null default now()
);
create index webhook_endpoints_org on webhook_endpoints (org_id, created_at);

create table webhook_events (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  type text not null,
  body text not null,
  created_at timestamptz not null default now()
);

create table webhook_deliveries (
  id text primary key,
  -- the log's order (newest first) and its page cursor
  seq bigserial unique,
  org_id text not null references orgs(id) on delete cascade,
  endpoint_id text not null references webhook_endpoints(id) on delete cascade,
  event_id text not null references webhook_events(id) on delete cascade,
  event_type text not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  -- every attempt: {at, responseStatus, error, durationMs}
  attempts jsonb not null default '[]',
  next_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending';
create index webhook_deliveries_log on webhook_deliveries (endpoint_id, seq desc);
