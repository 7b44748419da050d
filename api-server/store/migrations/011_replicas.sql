-- Up Migration
-- Replicas: every api-server process has a row it heartbeats. A daemon's registry row names
-- the replica holding its WebSocket, so a tunnel dial landing elsewhere is forwarded there,
-- and a replica that stopped heartbeating counts its daemons offline.
create table api_replicas (
  id text primary key,
  -- where the other replicas reach this one (null: it accepts no forwarded dials)
  address text,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now()
);

alter table network_daemons add column replica_id text;
create index network_daemons_replica on network_daemons (replica_id);
