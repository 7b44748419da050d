-- Up Migration
-- Read-only share links for one session's live view (issue #17): a person in the org makes
-- one; whoever holds the link may watch until it expires or is revoked. Only the token's
-- hash is kept; the link is shown once.
create table live_shares (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  session_id text not null,
  token_hash text not null unique,
  created_by text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index live_shares_session on live_shares (org_id, session_id);
