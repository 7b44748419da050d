-- Up Migration
-- Admission's counts, kept instead of counted. nightjar_admit_start (migration 017) counted
-- every open session twice per start (once without the lock, once under it): at 10,000 open
-- sessions Postgres's CPU per start was twice what it was at 1,000 (bench/README.md, "Scale
-- on a simulated fleet"). Here a trigger keeps the open sessions of each org and of the
-- deployment in two small tables, and admission reads one row of each.
--
-- "Open" is pending or live, as before. The triggers fire only when a row opens, closes,
-- moves org or goes: a driving call's last_active_at write does not fire them. Every write
-- to sessions is of one row, and the triggers update the org's row before the total's, so
-- two writers lock counter rows in the same order and never deadlock on them.
--
-- A rolling upgrade: the functions keep their names and signatures (replicas still on the
-- old code call them) and answer as before; the counts are filled in this migration's
-- transaction after the triggers exist, and creating a trigger locks sessions against
-- writes until the commit, so no start or end falls between the fill and the triggers.
create table open_sessions_by_org (
  org_id text primary key references orgs(id) on delete cascade,
  open integer not null
);
create table open_sessions_total (
  -- one row: the deployment's open sessions
  singleton boolean primary key default true check (singleton),
  open integer not null
);

create function nightjar_count_open_sessions() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.status in ('pending', 'live') then
    update open_sessions_by_org set open = open - 1 where org_id = old.org_id;
    update open_sessions_total set open = open - 1;
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.status in ('pending', 'live') then
    insert into open_sessions_by_org (org_id, open) values (new.org_id, 1)
      on conflict (org_id) do update set open = open_sessions_by_org.open + 1;
    update open_sessions_total set open = open + 1;
  end if;
  return null;
end
$$;

create trigger sessions_count_open_insert after insert on sessions
  for each row when (new.status in ('pending', 'live')) execute function nightjar_count_open_sessions();
create trigger sessions_count_open_update after update of status, org_id on sessions
  for each row when ((old.status in ('pending', 'live')) is distinct from (new.status in ('pending', 'live')) or old.org_id is distinct from new.org_id)
  execute function nightjar_count_open_sessions();
create trigger sessions_count_open_delete after delete on sessions
  for each row when (old.status in ('pending', 'live')) execute function nightjar_count_open_sessions();

insert into open_sessions_by_org (org_id, open)
  select org_id, count(*) from sessions where status in ('pending', 'live') group by org_id;
insert into open_sessions_total (open)
  select count(*) from sessions where status in ('pending', 'live');

-- The same answers as migrations 016 and 017, from the kept counts. The first read, without
-- the lock, refuses a start already over quota at once; the second, under the lock, decides
-- (READ COMMITTED: each statement sees every count the previous holder committed).
create or replace function nightjar_open_sessions(p_org_id text, out org_open integer, out all_open integer)
language sql stable as $$
  select coalesce((select open from open_sessions_by_org where org_id = p_org_id), 0),
         (select open from open_sessions_total)
$$;

create or replace function nightjar_admit_session(
  lock_key bigint, org_max integer, total_max integer,
  p_id text, p_org_id text, p_agent_id text, p_opened_by jsonb, p_admission text, p_identity_id text, p_grant_id text,
  p_egress text, p_network_id text, p_browser_kind text, p_url text, p_viewport jsonb, p_created_at timestamptz,
  p_idle_timeout_secs integer, p_max_duration_secs integer
) returns text language plpgsql volatile as $$
declare
  answer jsonb;
begin
  answer := nightjar_admit_start(lock_key, org_max, total_max, p_id, p_org_id, p_agent_id, p_opened_by, p_admission, p_identity_id, p_grant_id,
                                 p_egress, p_network_id, p_browser_kind, p_url, p_viewport, p_created_at, p_idle_timeout_secs, p_max_duration_secs, null);
  return answer->>'verdict';
end
$$;

create or replace function nightjar_admit_start(
  lock_key bigint, org_max integer, total_max integer,
  p_id text, p_org_id text, p_agent_id text, p_opened_by jsonb, p_admission text, p_identity_id text, p_grant_id text,
  p_egress text, p_network_id text, p_browser_kind text, p_url text, p_viewport jsonb, p_created_at timestamptz,
  p_idle_timeout_secs integer, p_max_duration_secs integer, p_record boolean
) returns jsonb language plpgsql volatile as $$
declare
  org_open integer;
  all_open integer;
  v_egress text;
  v_record boolean;
begin
  select o.org_open, o.all_open into org_open, all_open from nightjar_open_sessions(p_org_id) o;
  if org_open >= org_max then return jsonb_build_object('verdict', 'org_session_quota'); end if;
  if all_open >= total_max then return jsonb_build_object('verdict', 'session_capacity'); end if;
  perform pg_advisory_xact_lock(lock_key);
  select o.org_open, o.all_open into org_open, all_open from nightjar_open_sessions(p_org_id) o;
  if org_open >= org_max then return jsonb_build_object('verdict', 'org_session_quota'); end if;
  if all_open >= total_max then return jsonb_build_object('verdict', 'session_capacity'); end if;
  v_egress := coalesce(p_egress, (select default_egress from agents where id = p_agent_id), 'platform');
  v_record := coalesce(p_record, (select record_sessions from org_governance where org_id = p_org_id), false);
  insert into sessions (id, org_id, agent_id, opened_by, admission, identity_id, grant_id, egress, network_id, browser_kind, url, viewport, status, created_at,
                        idle_timeout_secs, max_duration_secs)
  values (p_id, p_org_id, p_agent_id, p_opened_by, p_admission, p_identity_id, p_grant_id, v_egress, p_network_id, p_browser_kind, p_url, p_viewport, 'pending', p_created_at,
          p_idle_timeout_secs, p_max_duration_secs);
  return jsonb_build_object('verdict', 'admitted', 'egress', v_egress, 'record', v_record);
end
$$;
