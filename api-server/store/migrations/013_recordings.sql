-- Up Migration
-- Session recordings (issue #17 item 3): one row per recorded session. The timeline itself
-- (rrweb events, JSON) lives in blobs behind the RecordingStore port (a directory under the
-- data dir, or S3), one blob per chunk read from the pod, under storage_key + '/'; this row
-- is what lists it, sizes it and lets the retention sweep find it. Every query takes the
-- org id (a recording is read only through its session, in the caller's org).
create table recordings (
  session_id text primary key references sessions(id) on delete cascade,
  org_id text not null,
  storage_key text not null,                   -- the blobs' prefix: <org>/<session>
  started_at timestamptz not null,
  ended_at timestamptz,                        -- null while the session records
  bytes bigint not null default 0,             -- JSON bytes stored
  events integer not null default 0,
  chunks integer not null default 0,
  last_seq integer not null default 0,         -- the pod's last chunk stored (reads resume after it)
  dropped integer not null default 0           -- events the pod dropped (its buffer was full)
);
create index recordings_org_started on recordings (org_id, started_at desc);
create index recordings_started on recordings (started_at);
