-- Up Migration
-- Browser extensions an org uploads (docs/extensions.md). The package is kept in Postgres
-- (bytea, bounded to a few MiB by the upload): it is small, must never be deleted by the
-- recordings' retention, and its trust decision and its bytes change together or not at all.
-- A row never changes its bytes: a new upload is a new id, untrusted until an admin says so.
create table extensions (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  name text not null,
  version text not null,
  sha256 text not null,                         -- of the zip as uploaded, shown to whoever decides trust
  manifest jsonb not null,                      -- what the manifest declares: permissions, hosts, content scripts
  package bytea not null,                       -- the zip as uploaded
  package_bytes integer not null,
  trusted boolean not null default false,
  trust_decided_by text,
  trust_decided_at timestamptz,
  trust_reason text,
  created_by text not null,
  created_at timestamptz not null default now()
);
create index extensions_org on extensions (org_id, created_at);

-- the extensions a session loads, fixed at its start; an identity's default for starts that
-- name none (an MCP session_start, whose inputs are fixed, loads extensions this way)
alter table sessions add column extension_ids text[] not null default '{}';
alter table identities add column extension_ids text[] not null default '{}';
-- a fill's audit row names the (trusted) extensions its session loaded
alter table audit_events add column extension_ids text[];

-- Down Migration
alter table audit_events drop column extension_ids;
alter table identities drop column extension_ids;
alter table sessions drop column extension_ids;
drop table extensions;
