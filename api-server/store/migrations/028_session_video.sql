-- Up Migration
-- Video of a session (docs/sessions.md, "Video"): an org default (off unless an admin turns
-- it on), one row per session with a video, and admission answering the video default
-- beside the recording default in its one round trip. The video itself is one object in
-- the RecordingStore, under the recording's prefix (<org>/<session>/video.<format>), so the
-- retention sweep of either finds it. A new admission function, as in migration 017 (reading migration 027's kept counts):
-- replicas still on the old code keep calling nightjar_admit_start.
alter table org_governance add column video_sessions boolean not null default false;
-- an org's own bounds on every video, below the platform's (null: the platform's alone)
alter table org_governance add column video_max_seconds integer check (video_max_seconds > 0);
alter table org_governance add column video_max_mib integer check (video_max_mib > 0);

create table session_videos (
  session_id text primary key references sessions(id) on delete cascade,
  org_id text not null,
  storage_key text not null,                   -- the object's key: <org>/<session>/video.<format>
  format text not null check (format in ('webm', 'mp4')),
  fps integer not null,
  width integer not null,
  started_at timestamptz not null,
  ended_at timestamptz,                        -- null while the session records
  stored boolean not null default false,       -- the file reached the store
  bytes bigint not null default 0,
  duration_ms integer not null default 0,
  frames integer not null default 0,
  truncated boolean not null default false,    -- a bound ended it before the session did
  lost boolean not null default false          -- the pod was gone before the file was read
);
create index session_videos_org_started on session_videos (org_id, started_at desc);
create index session_videos_started on session_videos (started_at);

create function nightjar_admit_start_v2(
  lock_key bigint, org_max integer, total_max integer,
  p_id text, p_org_id text, p_agent_id text, p_opened_by jsonb, p_admission text, p_identity_id text, p_grant_id text,
  p_egress text, p_network_id text, p_browser_kind text, p_url text, p_viewport jsonb, p_created_at timestamptz,
  p_idle_timeout_secs integer, p_max_duration_secs integer, p_record boolean, p_video boolean
) returns jsonb language plpgsql volatile as $$
declare
  org_open integer;
  all_open integer;
  v_egress text;
  v_record boolean;
  v_video boolean;
begin
  -- over quota already, without the lock: refused at once (as in migration 016), from the
  -- counts a trigger keeps (migration 027)
  select o.org_open, o.all_open into org_open, all_open from nightjar_open_sessions(p_org_id) o;
  if org_open >= org_max then return jsonb_build_object('verdict', 'org_session_quota'); end if;
  if all_open >= total_max then return jsonb_build_object('verdict', 'session_capacity'); end if;
  -- then the count that decides, under the lock
  perform pg_advisory_xact_lock(lock_key);
  select o.org_open, o.all_open into org_open, all_open from nightjar_open_sessions(p_org_id) o;
  if org_open >= org_max then return jsonb_build_object('verdict', 'org_session_quota'); end if;
  if all_open >= total_max then return jsonb_build_object('verdict', 'session_capacity'); end if;
  v_egress := coalesce(p_egress, (select default_egress from agents where id = p_agent_id), 'platform');
  v_record := coalesce(p_record, (select record_sessions from org_governance where org_id = p_org_id), false);
  v_video := coalesce(p_video, (select video_sessions from org_governance where org_id = p_org_id), false);
  insert into sessions (id, org_id, agent_id, opened_by, admission, identity_id, grant_id, egress, network_id, browser_kind, url, viewport, status, created_at,
                        idle_timeout_secs, max_duration_secs)
  values (p_id, p_org_id, p_agent_id, p_opened_by, p_admission, p_identity_id, p_grant_id, v_egress, p_network_id, p_browser_kind, p_url, p_viewport, 'pending', p_created_at,
          p_idle_timeout_secs, p_max_duration_secs);
  return jsonb_build_object('verdict', 'admitted', 'egress', v_egress, 'record', v_record, 'video', v_video);
end
$$;
