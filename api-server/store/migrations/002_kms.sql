-- Up Migration
-- One wrapped data key per org (envelope encryption). The key is wrapped by the KMS
-- provider named in `provider`, so a deployment that switches provider fails closed
-- instead of trying to unwrap with the wrong one. No foreign key to orgs: the key
-- store is usable (and testable) on its own, and an org's sealed rows cascade away
-- with the org while its key row is harmless without them.
create table org_data_keys (
  org_id text primary key,
  provider text not null check (provider in ('local', 'aws')),
  wrapped_key bytea not null,
  created_at timestamptz not null default now()
);
