-- Up Migration
-- A credential an agent asked a person to enter (issue #29 item 2, credential_request):
-- what was asked (identity, name, allowed hosts, the agent's reason), until when, and
-- whether someone answered. Never a value: the secret goes straight into `credentials`,
-- sealed like any other, in the transaction that closes the request.
create table credential_requests (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  identity_id text not null references identities(id) on delete cascade,
  credential_name text not null,
  origin_allowlist text[] not null,
  reason text not null,
  requested_by text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  completed_at timestamptz,
  completed_by text,
  credential_id text
);
create index credential_requests_org on credential_requests(org_id, created_at desc);
