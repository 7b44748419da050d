-- Up Migration
-- Session rows are what the API lists and the tenancy boundary for every session
-- lookup; the BrowserSession resource carries what the operator needs to act.
create table sessions (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  agent_id text not null references agents(id) on delete cascade,
  opened_by jsonb not null,
  admission text not null check (admission in ('direct', 'spawned_child')),
  identity_id text,
  grant_id text,
  egress text not null check (egress in ('local', 'split', 'platform')),
  network_id text,
  browser_kind text not null default 'chromium' check (browser_kind in ('chromium', 'cloak')),
  url text,
  viewport jsonb,
  status text not null check (status in ('pending', 'live', 'ended', 'failed')),
  failure_reason text,
  created_at timestamptz not null default now(),
  live_at timestamptz,
  ended_at timestamptz
);
create index sessions_org on sessions(org_id, created_at desc);
create index sessions_open on sessions(status) where status in ('pending', 'live');

-- value-free per-session journal: operation names, selectors, verbs, outcomes;
-- never typed text, credential values or page content
create table session_journal (
  id bigserial primary key,
  session_id text not null references sessions(id) on delete cascade,
  org_id text not null,
  op text not null,
  detail jsonb not null default '{}',
  outcome text not null check (outcome in ('ok', 'error')),
  error_code text,
  duration_ms integer,
  created_at timestamptz not null default now()
);
create index session_journal_session on session_journal(session_id, id);
