-- Up Migration
-- Fair webhook delivery. An endpoint keeps its health (failed attempts in a row, since
-- when, its last 2xx) and may be disabled after failing; a delivery in flight carries
-- leased_until, so every replica counts what each endpoint and org has in flight. The
-- claim (nightjar_webhook_claim) runs under one advisory lock, as a function so the lock never
-- spans a client round trip: the per-endpoint and per-org bounds hold across replicas.
-- Design: docs/webhooks.md#fair-delivery
alter table webhook_endpoints
  add column failure_streak integer not null default 0,
  add column failing_since timestamptz,
  add column last_success_at timestamptz,
  add column last_claimed_at timestamptz,
  add column disabled_at timestamptz,
  add column disabled_reason text,
  add column disabled_failures integer,
  add column disabled_failing_since timestamptz;
-- an endpoint that delivered before counts as answering
update webhook_endpoints w set last_success_at = (select max(d.delivered_at) from webhook_deliveries d where d.endpoint_id = w.id);

alter table webhook_deliveries add column leased_until timestamptz;
create index webhook_deliveries_endpoint_due on webhook_deliveries (endpoint_id, next_attempt_at, seq) where state = 'pending';
create index webhook_deliveries_leased on webhook_deliveries (endpoint_id) where leased_until is not null;

-- Leases up to lim due deliveries and returns their ids. An endpoint has at most
-- endpoint_max in flight once its last attempt got a 2xx, else one; an org at most
-- org_max, of which at most org_quiet_max to endpoints not answering. Orgs take turns
-- (fewest in flight first), and within an org answering endpoints go first, then the
-- endpoint claimed least recently; an endpoint's own deliveries go oldest first.
create function nightjar_webhook_claim(lim integer, lease_ms double precision, endpoint_max integer, org_max integer, org_quiet_max integer)
returns setof text language plpgsql as $$
begin
  -- 'njwhook' in ASCII; the statement below takes its snapshot after the lock, so it sees every earlier claim
  perform pg_advisory_xact_lock(31079308523958123);
  return query
  with load as (
    select x.endpoint_id, count(*)::int as n from webhook_deliveries x
     where x.leased_until is not null and x.leased_until > now() and x.state = 'pending'
     group by x.endpoint_id
  ), org_load as (
    select w.org_id, sum(l.n)::int as n,
           coalesce(sum(l.n) filter (where not (w.failure_streak = 0 and w.last_success_at is not null)), 0)::int as quiet
      from load l join webhook_endpoints w on w.id = l.endpoint_id
     group by w.org_id
  ), open as (
    select w.id, w.org_id, w.last_claimed_at, a.answering, coalesce(l.n, 0) as ep_n,
           coalesce(o.n, 0) as org_n, coalesce(o.quiet, 0) as org_quiet,
           (case when a.answering then endpoint_max else 1 end) - coalesce(l.n, 0) as room
      from webhook_endpoints w
      cross join lateral (select (w.failure_streak = 0 and w.last_success_at is not null) as answering) a
      left join load l on l.endpoint_id = w.id
      left join org_load o on o.org_id = w.org_id
     where w.disabled_at is null
  ), cand as (
    select o.id as endpoint_id, o.org_id, o.answering, o.last_claimed_at, o.org_n, o.org_quiet,
           d.id, d.next_attempt_at, d.seq,
           o.ep_n + row_number() over (partition by o.id order by d.next_attempt_at, d.seq) as ep_slot
      from open o
      cross join lateral (
        select x.id, x.next_attempt_at, x.seq from webhook_deliveries x
         where x.endpoint_id = o.id and x.state = 'pending' and x.next_attempt_at <= now()
         order by x.next_attempt_at, x.seq limit greatest(o.room, 0)
      ) d
     where o.room > 0 and o.org_n < org_max and (o.answering or o.org_quiet < org_quiet_max)
  ), ranked as (
    select c.*,
           c.org_n + row_number() over (partition by c.org_id
             order by c.answering desc, c.ep_slot, c.last_claimed_at nulls first, c.next_attempt_at, c.seq) as org_slot,
           c.org_quiet + row_number() over (partition by c.org_id, c.answering
             order by c.ep_slot, c.last_claimed_at nulls first, c.next_attempt_at, c.seq) as quiet_slot
      from cand c
  ), picked as (
    select r.id from ranked r
     where r.org_slot <= org_max and (r.answering or r.quiet_slot <= org_quiet_max)
     order by r.org_slot, r.answering desc, r.ep_slot, r.last_claimed_at nulls first, r.next_attempt_at, r.seq
     limit lim
  ), locked as (
    select x.id, x.endpoint_id from webhook_deliveries x
     where x.id in (select p.id from picked p) and x.state = 'pending' and x.next_attempt_at <= now()
       for update skip locked
  ), touched as (
    update webhook_endpoints w set last_claimed_at = now() where w.id in (select k.endpoint_id from locked k)
  )
  update webhook_deliveries d
     set next_attempt_at = now() + make_interval(secs => lease_ms / 1000), leased_until = now() + make_interval(secs => lease_ms / 1000)
    from locked k where d.id = k.id
  returning d.id;
end $$;

-- Down Migration
drop function nightjar_webhook_claim(integer, double precision, integer, integer, integer);
drop index webhook_deliveries_leased;
drop index webhook_deliveries_endpoint_due;
alter table webhook_deliveries drop column leased_until;
alter table webhook_endpoints
  drop column failure_streak, drop column failing_since, drop column last_success_at, drop column last_claimed_at,
  drop column disabled_at, drop column disabled_reason, drop column disabled_failures, drop column disabled_failing_since;
