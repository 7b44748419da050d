-- Up Migration
-- What isolated a session's pages (chromium, chromium+gvisor, gvisor or none), as its
-- browser pod reported it when the session went live. Null before that, and for sessions
-- of releases that did not record it.
alter table sessions add column sandbox text
  check (sandbox in ('chromium', 'chromium+gvisor', 'gvisor', 'none'));

-- Down Migration
alter table sessions drop column sandbox;
