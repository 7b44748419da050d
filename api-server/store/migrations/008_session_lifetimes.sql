-- Up Migration
-- Sessions end on their own: after idle_timeout_secs without a driving call, or
-- max_duration_secs after they went live (sessions/expiry.ts). last_active_at is written
-- at most every few seconds per session, so every api-server replica's reaper sees it.
alter table sessions
  add column idle_timeout_secs integer,
  add column max_duration_secs integer,
  add column last_active_at timestamptz,
  add column end_reason text;
create index sessions_live_activity on sessions(last_active_at) where status = 'live';
