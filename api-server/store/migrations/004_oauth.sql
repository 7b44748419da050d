-- Up Migration
-- OAuth 2.1 for agent clients: registered clients, one grant per
-- (org, user, client, workspace) bound to a developer agent, single-use authorization
-- codes, device authorizations, and access/refresh tokens. Every secret (token,
-- code, device code) is stored only as its SHA-256; every expiry is written from the
-- service clock (services.now()) so tests can advance time.

create table oauth_clients (
  id text primary key,                               -- ncli_…
  client_name text not null,
  redirect_uris text[] not null,
  grant_types text[] not null,
  response_types text[] not null,
  scope text not null,                               -- always the clamped default set
  builtin boolean not null default false,            -- the pre-registered CLI client; never revoked
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

-- The built-in client (see README "Connecting an MCP client"). Loopback redirects
-- match on any port (RFC 8252 §7.3); the out-of-band URI shows the code on a page.
insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types, scope, builtin)
values (
  'ncli_nightjar_cli',
  'Nightjar CLI',
  array['http://127.0.0.1/callback', 'http://localhost/callback', 'urn:ietf:wg:oauth:2.0:oob'],
  array['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
  array['code'],
  'sessions:write sessions:drive identities:read',
  true
);

-- The grant: what a human approved. Re-login from the same workspace reuses the row
-- (and its developer agent); a revoked row is re-activated by a fresh consent, while
-- every token issued before the revocation stays revoked (tokens carry revoked_at).
create table oauth_grants (
  id text primary key,                               -- nkey_… (operator commands use it)
  org_id text not null references orgs(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  client_id text not null references oauth_clients(id) on delete cascade,
  workspace text not null,
  agent_id text not null references agents(id) on delete cascade,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  unique (org_id, user_id, client_id, workspace)
);
create index oauth_grants_client on oauth_grants(client_id);

-- family_id groups the tokens one code (or device approval) issued and their refresh
-- rotations, so a replayed code revokes exactly what it issued.
create table oauth_codes (
  code_hash text primary key,
  grant_id text not null references oauth_grants(id) on delete cascade,
  client_id text not null,
  redirect_uri text not null,
  code_challenge text not null,
  resource text not null,
  scopes text[] not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  family_id text
);
create index oauth_codes_grant on oauth_codes(grant_id);

create table oauth_device_codes (
  device_code_hash text primary key,
  user_code text not null unique,                    -- 8 characters, stored without the dash
  client_id text not null references oauth_clients(id) on delete cascade,
  workspace text not null,
  resource text not null,
  scopes text[] not null,
  interval_secs integer not null,
  last_polled_at timestamptz,
  expires_at timestamptz not null,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'consumed')),
  grant_id text references oauth_grants(id) on delete cascade,
  created_at timestamptz not null default now()
);

create table oauth_tokens (
  token_hash text primary key,
  kind text not null check (kind in ('access', 'refresh')),
  grant_id text not null references oauth_grants(id) on delete cascade,
  client_id text not null,
  family_id text not null,
  audience text not null,                            -- the resource it was issued for
  scopes text[] not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  used_at timestamptz,                               -- refresh tokens: spent by rotation
  revoked_at timestamptz
);
create index oauth_tokens_grant on oauth_tokens(grant_id);
create index oauth_tokens_family on oauth_tokens(family_id);
-- housekeeping deletes rows a day past expiry (grants.ts purgeExpired)
create index oauth_tokens_expiry on oauth_tokens(expires_at);
create index oauth_codes_expiry on oauth_codes(expires_at);
create index oauth_device_codes_expiry on oauth_device_codes(expires_at);
