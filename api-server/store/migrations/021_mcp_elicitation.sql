-- Up Migration
-- URL elicitation on the stateless /mcp (api-server/mcp/elicitation.ts), in the shared
-- store so that any api-server replica can use it:
--  - mcp_elicitation_clients: the memo of a client that declared `elicitation: { url: {} }`
--    in its initialize — its Mcp-Session-Id, bound to the org and Bearer credential that
--    declared it, nothing else. Bounded per credential and per org (the least recently used
--    go first, within that credential or org only), and forgotten after a day unused.
--  - mcp_elicitation_answers: an elicitation/create a tool call sent and waits on; the
--    client's answer (accept, decline, cancel) is written here by whichever replica its POST
--    reaches, and the replica holding the call reads it.
-- Times are milliseconds since the epoch of the service clock.
create table mcp_elicitation_clients (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  credential_id text not null,
  last_used_ms bigint not null
);
create index mcp_elicitation_clients_credential on mcp_elicitation_clients(org_id, credential_id, last_used_ms desc);
create index mcp_elicitation_clients_org on mcp_elicitation_clients(org_id, last_used_ms desc);

create table mcp_elicitation_answers (
  id text primary key,
  org_id text not null references orgs(id) on delete cascade,
  credential_id text not null,
  action text check (action in ('accept', 'decline', 'cancel', 'none')),
  expires_ms bigint not null
);
create index mcp_elicitation_answers_org on mcp_elicitation_answers(org_id, expires_ms);
