-- Up Migration
-- An org default for session recordings (issue #17 item 3): when a session start leaves
-- `record` out, the org's setting decides. Off unless an admin turns it on.
alter table org_governance add column record_sessions boolean not null default false;
