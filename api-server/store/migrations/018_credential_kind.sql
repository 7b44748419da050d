-- Up Migration
-- A credential holds a password (typed as is) or a TOTP seed (issue #29 item 1: its
-- sealed value is an otpauth://totp/ URI and a fill types the current code). Every
-- credential before this one is a password.
alter table credentials add column kind text not null default 'password' check (kind in ('password', 'totp'));
