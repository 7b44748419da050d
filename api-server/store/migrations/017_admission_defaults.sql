-- Up Migration
-- A start's defaults — the agent's egress, the org's recording default — are read inside
-- admission's own call (migration 016) instead of in a query of their own before it: one
-- database round trip fewer per start (a burst of sixteen warm starts is CPU-bound on a
-- small machine, and every round trip costs the api-server and Postgres a little).
-- A new name, not a replacement: during a rolling upgrade the replicas still on the old
-- code keep calling nightjar_admit_session, which stays as it was.
-- p_egress and p_record are null when the start left them out. The answer is a JSON
-- object: {"verdict": …} for a refusal; for an admitted start also the egress written on
-- the row and whether the session records.
create function nightjar_admit_start(
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
  -- over quota already, without the lock: refused at once (as in migration 016)
  select count(*) filter (where org_id = p_org_id), count(*) into org_open, all_open
    from sessions where status in ('pending', 'live');
  if org_open >= org_max then return jsonb_build_object('verdict', 'org_session_quota'); end if;
  if all_open >= total_max then return jsonb_build_object('verdict', 'session_capacity'); end if;
  -- then the count that decides, under the lock
  perform pg_advisory_xact_lock(lock_key);
  select count(*) filter (where org_id = p_org_id), count(*) into org_open, all_open
    from sessions where status in ('pending', 'live');
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
