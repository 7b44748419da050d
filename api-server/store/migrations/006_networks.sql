-- Up Migration
-- Local reach: networks, their join tokens (hash only) and the daemon registry.
create table networks (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  slug text not null,
  declared_hosts text[] not null default '{}',
  created_at timestamptz not null default now(),
  unique (org_id, name),
  unique (org_id, slug)
);

-- deleting a network deletes its tokens: they stop working at once
create table network_join_tokens (
  id text primary key,
  network_id text not null references networks(id) on delete cascade,
  token_hash text not null unique,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

-- one row per daemon id; a reconnect with the same --daemon-id reuses its row
create table network_daemons (
  id text not null,
  network_id text not null references networks(id) on delete cascade,
  org_id text not null,
  host text not null,
  version text not null,
  connected_since timestamptz not null,
  last_seen_at timestamptz not null default now(),
  online boolean not null default true,
  primary key (network_id, id)
);
