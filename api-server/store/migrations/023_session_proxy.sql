-- Up Migration
-- A session's upstream proxy (issue #39 item 1, docs/proxy.md). The URL holds no
-- credentials (scheme://host:port); the credentials, when any, are the Sealer's base64
-- envelope of {"username","password"} (AAD: org, kind proxy_auth, the session's or the
-- identity's id), never plaintext. An identity may hold a default proxy the same way.
-- proxy_hosts is the org admin's allowlist of proxy hosts (host[:port]): empty, the
-- default, allows no proxy at all.
alter table org_governance add column proxy_hosts text[] not null default '{}';
alter table sessions add column proxy_url text, add column proxy_sealed_auth text;
alter table identities add column proxy_url text, add column proxy_sealed_auth text;

-- Down Migration
alter table identities drop column proxy_url, drop column proxy_sealed_auth;
alter table sessions drop column proxy_url, drop column proxy_sealed_auth;
alter table org_governance drop column proxy_hosts;
