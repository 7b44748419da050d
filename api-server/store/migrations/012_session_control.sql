-- Up Migration
-- Watching and taking over (issue #17): who drives a live session's browser. 'agent' is
-- the default; 'human' while a person of the org holds control from the console's live
-- view, when every driving tool that changes the page answers 409 human_in_control. Kept
-- on the session row, not in a process, because any api-server replica may serve a
-- driving call or a viewer of the same session.
alter table sessions
  add column control text not null default 'agent' check (control in ('agent', 'human')),
  add column control_holder text,                      -- the console user holding control (users.id)
  add column control_changed_at timestamptz,
  add column human_requested_at timestamptz,           -- request_human: the agent asked for a person
  add column human_request_reason text;                -- what it asked (shown in the console), at most 500 characters
