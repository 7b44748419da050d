-- Up Migration
-- Personas: identities, their sealed credentials, the grants that let agents assume
-- them, the single-writer lease, and per-org governance flags. Every table carries
-- org_id so every lookup can be scoped to the caller's org.

create table identities (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  default_open_mode text not null default 'exclusive' check (default_open_mode in ('exclusive', 'fork', 'readonly')),
  created_at timestamptz not null default now(),
  unique (org_id, name)
);

-- sealed_value is the Sealer's base64 envelope (AAD: org, identity, credential);
-- masked_value is computed at write time so listing never needs a decrypt.
create table credentials (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  identity_id text not null references identities(id) on delete cascade,
  name text not null,
  placeholder text not null,
  sealed_value text not null,
  masked_value text not null,
  origin_allowlist text[] not null check (cardinality(origin_allowlist) >= 1),
  created_at timestamptz not null default now(),
  rotated_at timestamptz,
  unique (identity_id, name),
  unique (identity_id, placeholder)
);
create index credentials_org on credentials(org_id);

-- Named identity_grants so it cannot be confused with OAuth grants.
create table identity_grants (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  identity_id text not null references identities(id) on delete cascade,
  principal_agent_id text not null references agents(id) on delete cascade,
  principal_user_id text references users(id) on delete set null,
  principal_org_role text check (principal_org_role in ('owner', 'admin', 'member')),
  role text not null check (role in ('assume', 'manage')),
  expires_at timestamptz not null,
  allowed_origins text[] not null default '{}',
  propagation text not null check (propagation in ('none', 'same_conversation', 'descendants')),
  max_session_duration_secs integer check (max_session_duration_secs > 0),
  reason text not null,
  created_by_user_id text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index identity_grants_lookup on identity_grants(identity_id, principal_agent_id);
create index identity_grants_agent on identity_grants(org_id, principal_agent_id);

-- One live session per identity: the primary key is the lock. The identity foreign
-- key is NO ACTION (not cascade), so deleting a leased identity fails instead of
-- silently dropping a live session's lease; an org delete still cascades through.
-- session_id has no foreign key: sessions are owned by another module, and the
-- reaper (not the database) decides when a holder is dead.
create table identity_leases (
  identity_id text primary key references identities(id),
  org_id text not null references orgs(id) on delete cascade,
  session_id text not null unique,
  agent_id text not null,
  grant_id text,
  acquired_at timestamptz not null,
  expires_at timestamptz not null
);

create table org_governance (
  org_id text primary key references orgs(id) on delete cascade,
  credential_freetext_fill boolean not null default false,
  cloak_enabled boolean not null default false,
  declared_advisor_origins text[] not null default '{}',
  updated_at timestamptz not null default now()
);
