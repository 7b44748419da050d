-- Up Migration
-- A rotated webhook secret keeps signing beside the new one until its overlap ends, so a
-- receiver that updates late still verifies. It stays sealed under the org's data key as
-- the new one is, and the worker drops it once its time is up: never kept past the window.
-- Design: docs/webhooks.md#rotating-the-secret
alter table webhook_endpoints
  add column previous_secret_sealed text,
  add column previous_secret_expires_at timestamptz,
  add constraint webhook_endpoints_previous_secret_pair check ((previous_secret_sealed is null) = (previous_secret_expires_at is null));
create index webhook_endpoints_previous_secret_expiry on webhook_endpoints (previous_secret_expires_at) where previous_secret_expires_at is not null;

-- Down Migration
drop index webhook_endpoints_previous_secret_expiry;
alter table webhook_endpoints drop constraint webhook_endpoints_previous_secret_pair,
  drop column previous_secret_sealed, drop column previous_secret_expires_at;
