-- Up Migration
-- The api-server replica that is starting a session (api_replicas.id). A start is work in
-- one process's memory: if that process dies before the session is live, its row would read
-- pending for ever and its browser pod run with no one to end it. Other replicas fail such
-- a start (reason Orphaned) and end its resource once the starter counts as dead.
alter table sessions add column starter_replica_id text;
create index sessions_pending_starter on sessions (starter_replica_id) where status = 'pending';

-- Down Migration
drop index sessions_pending_starter;
alter table sessions drop column starter_replica_id;
