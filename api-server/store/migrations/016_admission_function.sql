-- Up Migration
-- Admission in one round trip (sessions/admission.ts). A start's quota check and its row
-- must happen under one lock, so that a burst on any number of replicas admits exactly up
-- to the quota. Done from the client, that was BEGIN, the lock, the count, the insert and
-- COMMIT — five round trips, all but the first with the lock held — and a burst of twenty
-- starts spent most of its time queued on that lock. Here the lock, the count and the
-- insert run in one statement's transaction: the lock is held for the server's own work.
-- A start already over quota is refused by a first count without the lock, as before.
-- In READ COMMITTED each statement of a PL/pgSQL function takes a fresh snapshot, so the
-- count, taken after the lock was granted, sees every row the previous holder committed.
-- The insert's columns are insertSession's (sessions/store.ts), in the same order.
create function nightjar_admit_session(
  lock_key bigint, org_max integer, total_max integer,
  p_id text, p_org_id text, p_agent_id text, p_opened_by jsonb, p_admission text, p_identity_id text, p_grant_id text,
  p_egress text, p_network_id text, p_browser_kind text, p_url text, p_viewport jsonb, p_created_at timestamptz,
  p_idle_timeout_secs integer, p_max_duration_secs integer
) returns text language plpgsql volatile as $$
declare
  org_open integer;
  all_open integer;
begin
  -- over quota already, without the lock: refused at once, not after queueing behind every
  -- start that holds or waits for it (a burst's refusals must come within a second)
  select count(*) filter (where org_id = p_org_id), count(*) into org_open, all_open
    from sessions where status in ('pending', 'live');
  if org_open >= org_max then return 'org_session_quota'; end if;
  if all_open >= total_max then return 'session_capacity'; end if;
  -- then the count that decides, under the lock
  perform pg_advisory_xact_lock(lock_key);
  select count(*) filter (where org_id = p_org_id), count(*) into org_open, all_open
    from sessions where status in ('pending', 'live');
  if org_open >= org_max then return 'org_session_quota'; end if;
  if all_open >= total_max then return 'session_capacity'; end if;
  insert into sessions (id, org_id, agent_id, opened_by, admission, identity_id, grant_id, egress, network_id, browser_kind, url, viewport, status, created_at,
                        idle_timeout_secs, max_duration_secs)
  values (p_id, p_org_id, p_agent_id, p_opened_by, p_admission, p_identity_id, p_grant_id, p_egress, p_network_id, p_browser_kind, p_url, p_viewport, 'pending', p_created_at,
          p_idle_timeout_secs, p_max_duration_secs);
  return 'admitted';
end
$$;
