-- Up Migration
-- The abuse limits' counters (api-server/limits/): one row per policy and key, shared by
-- every api-server replica, so a limit holds across replicas instead of per process.
-- Keys never hold secrets or personal data in clear (policy name + an IP, a hash of an
-- e-mail, or a network reference). Times are milliseconds since the epoch, as the
-- policies compute them.
create table limit_records (
  key text primary key,
  count integer not null,
  start_ms bigint not null,
  until_ms bigint not null,
  expires_at_ms bigint not null
);
create index limit_records_expiry on limit_records(expires_at_ms);
