-- Up Migration
-- Captured auth-state versions (niver_): an identity's cookies, localStorage and
-- sessionStorage, sealed as one JSON document under the org's data key (AAD: org,
-- 'authstate', identity, version). Credential-equivalent: only sealed_state holds
-- anything of it; origins lists the hosts it covers, never a value. A version is
-- immutable; a new capture adds a row, and warm resume takes the newest unless told.
create table auth_state_versions (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  identity_id text not null references identities(id) on delete cascade,
  sealed_state text not null,
  origins text[] not null default '{}',
  created_at timestamptz not null default now(),
  created_by text not null
);
create index auth_state_versions_latest on auth_state_versions(org_id, identity_id, created_at desc);
