-- Up Migration
-- Reach grants: an agent may call local_reach_ensure without networks:write (which an
-- OAuth login never holds) while it holds a live grant. kind 'network' names one existing
-- network; kind 'seed' lets the agent create one network of its own, bound here by its
-- first local_reach_ensure. Revocation is soft (revoked_at), so the list keeps history.
-- Deleting a network ends its network grants (network_id set null: state 'ended') and
-- unbinds a seed grant (the next local_reach_ensure seeds again).
create table reach_grants (
  id text primary key,                               -- nrch_…
  org_id text not null references orgs(id) on delete cascade,
  agent_id text not null references agents(id) on delete cascade,
  kind text not null check (kind in ('network', 'seed')),
  network_id text references networks(id) on delete set null,
  created_by text not null,                          -- the console user, or the agent behind the key
  created_at timestamptz not null,
  revoked_at timestamptz,
  revoked_by text
);
create index reach_grants_org_agent on reach_grants(org_id, agent_id, created_at);
-- one live seed grant per agent, one live network grant per (agent, network)
create unique index reach_grants_one_seed on reach_grants(agent_id) where kind = 'seed' and revoked_at is null;
create unique index reach_grants_one_per_network on reach_grants(agent_id, network_id) where kind = 'network' and revoked_at is null;
