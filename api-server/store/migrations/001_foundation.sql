-- Up Migration
create table orgs (
  id text primary key,
  name text not null unique,
  created_at timestamptz not null default now()
);

create table users (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  email text not null unique,
  password_hash text not null,
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now()
);
create index users_org on users(org_id);

-- agents act on behalf of an org; children carry a provenance edge to their parent
create table agents (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  kind text not null default 'agent' check (kind in ('agent', 'child', 'developer')),
  parent_agent_id text references agents(id) on delete cascade,
  default_egress text not null default 'platform' check (default_egress in ('local', 'split', 'platform')),
  is_default boolean not null default false,
  created_at timestamptz not null default now(),
  unique (org_id, name)
);
create unique index agents_one_default on agents(org_id) where is_default;

create table api_keys (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  token_hash text not null unique,
  scopes text[] not null,
  agent_id text references agents(id) on delete cascade,
  created_by_user_id text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_org on api_keys(org_id);

create table console_sessions (
  id text primary key,
  user_id text not null references users(id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);

-- append-only and value-free: ids, names, hosts, field kinds and reasons only
create table audit_events (
  id bigserial primary key,
  org_id text not null,
  actor text not null,
  action text not null,
  target_type text,
  target_id text,
  identity_id text,
  credential_id text,
  grant_id text,
  session_id text,
  credential_name text,
  host text,
  field_kind text,
  reason text,
  created_at timestamptz not null default now()
);
create index audit_events_org on audit_events(org_id, id);
create index audit_events_grant on audit_events(grant_id) where grant_id is not null;
