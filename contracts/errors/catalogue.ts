// The one error catalogue: every error the service can return, declared once, grouped
// by family (how it goes on the wire) and section (where it comes from). docs/errors.md's
// error table is generated from it (scripts/gen-error-table.ts) and
// test/contracts/errors.test.ts fails on an entry no source uses, and the linter on an
// error built around it.
import type { AnyEntry, ApiEntry, OAuthEntry, PageEntry, RpcEntry, UpgradeEntry } from './entry.ts'
import { AUTH_ERRORS, CONSOLE_ERRORS, NETWORK_ERRORS, PERSONA_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './catalogue-service.ts'
import { POD_ERRORS } from './catalogue-pod.ts'
import { OAUTH_ERRORS } from './catalogue-oauth.ts'
import { PAGE_ERRORS, RPC_ERRORS, UPGRADE_ERRORS as BASE_UPGRADE_ERRORS } from './catalogue-non-json.ts'
import { TAB_ERRORS } from './catalogue-tabs.ts'
import { MOUSE_ERRORS } from './catalogue-mouse.ts'
import { FILE_ERRORS } from './catalogue-files.ts'
import { INSPECT_ERRORS } from './catalogue-inspect.ts'
import { CDP_ERRORS, CDP_UPGRADE_ERRORS } from './catalogue-cdp.ts'
import { REACH_ERRORS } from './catalogue-reach.ts'
import { LIVE_ERRORS, LIVE_UPGRADE_ERRORS } from './catalogue-live.ts'
import { WEBHOOK_ERRORS } from './catalogue-webhooks.ts'
import { PROXY_ERRORS } from './catalogue-proxy.ts'
import { EXTENSION_ERRORS } from './catalogue-extensions.ts'

const UPGRADE_ERRORS = { ...BASE_UPGRADE_ERRORS, ...CDP_UPGRADE_ERRORS, ...LIVE_UPGRADE_ERRORS } as const

/** JSON errors {"error": {"code", "message", "reason"?}}: REST, MCP tool results, the pod API */
export const API_ERRORS = {
  ...REQUEST_ERRORS, ...AUTH_ERRORS, ...SESSION_ERRORS, ...PERSONA_ERRORS, ...NETWORK_ERRORS, ...POD_ERRORS, ...CONSOLE_ERRORS,
  ...TAB_ERRORS, ...MOUSE_ERRORS, ...FILE_ERRORS, ...INSPECT_ERRORS, ...CDP_ERRORS, ...REACH_ERRORS, ...LIVE_ERRORS, ...WEBHOOK_ERRORS, ...PROXY_ERRORS,
  ...EXTENSION_ERRORS,
} as const satisfies Record<string, ApiEntry>

export { OAUTH_ERRORS, PAGE_ERRORS, UPGRADE_ERRORS, RPC_ERRORS }

export type ApiErrorKey = keyof typeof API_ERRORS
export type OAuthErrorKey = keyof typeof OAUTH_ERRORS
export type PageErrorKey = keyof typeof PAGE_ERRORS
export type UpgradeErrorKey = keyof typeof UPGRADE_ERRORS
export type RpcErrorKey = keyof typeof RPC_ERRORS

export type Family = 'api' | 'oauth' | 'page' | 'upgrade' | 'rpc'

/** How each family goes on the wire, and the object that builds it in source. */
export const FAMILIES: Record<Family, { title: string; wire: string; builder: string }> = {
  api: { title: 'Service errors (REST, MCP tool results, pod API)', wire: '`{"error":{"code","message","reason"?}}` (pod fill refusals add `host` / `field_kind`); MCP tool errors carry the same body with `status` in `structuredContent`', builder: 'errors' },
  oauth: { title: 'OAuth endpoints (RFC 6749)', wire: '`{"error","error_description"}`; the authorization endpoint sends the pair as redirect parameters', builder: 'oauthErrors' },
  page: { title: 'Console and OAuth pages', wire: 'an HTML page showing the message (a client that does not ask for HTML gets the JSON 429 above instead of a 429 page)', builder: 'pageErrors' },
  upgrade: { title: 'WebSocket upgrades (/ws/control, /ws/egress, CDP, live view, /internal/tunnel)', wire: 'plain-text HTTP response before any WebSocket exists', builder: 'upgradeErrors' },
  rpc: { title: 'MCP protocol (JSON-RPC)', wire: 'JSON-RPC `error` `{code, message, data?}`; `data` is `{status, error}` like a tool error', builder: 'rpcErrors' },
}

/** A catalogue entry with its key, family and section, as listed. */
export type Listed = AnyEntry & { key: string; family: Family; section: string }

const SECTIONS: [Family, string, Record<string, AnyEntry>][] = [
  ['api', 'requests', REQUEST_ERRORS],
  ['api', 'authentication and keys', AUTH_ERRORS],
  ['api', 'sessions', SESSION_ERRORS],
  ['api', 'personas, credentials and KMS', PERSONA_ERRORS],
  ['api', 'networks', NETWORK_ERRORS],
  ['api', 'browser pod', POD_ERRORS],
  ['api', 'console (JSON)', CONSOLE_ERRORS],
  ['api', 'tabs, dialogs and viewport', TAB_ERRORS],
  ['api', 'mouse and forms', MOUSE_ERRORS],
  ['api', 'session files and downloads', FILE_ERRORS],
  ['api', 'network log and evaluate', INSPECT_ERRORS],
  ['api', 'CDP connect', CDP_ERRORS],
  ['api', 'reach grants', REACH_ERRORS],
  ['api', 'watching and taking over', LIVE_ERRORS],
  ['api', 'webhooks', WEBHOOK_ERRORS],
  ['api', 'session proxies', PROXY_ERRORS],
  ['api', 'extensions', EXTENSION_ERRORS],
  ['oauth', 'OAuth', OAUTH_ERRORS],
  ['page', 'pages', PAGE_ERRORS],
  ['upgrade', 'upgrades', BASE_UPGRADE_ERRORS],
  ['upgrade', 'CDP upgrades', CDP_UPGRADE_ERRORS],
  ['upgrade', 'live-view upgrades', LIVE_UPGRADE_ERRORS],
  ['rpc', 'MCP protocol', RPC_ERRORS],
]

/** Every entry, in catalogue order. */
export const CATALOGUE: readonly Listed[] = SECTIONS.flatMap(([family, section, entries]) =>
  Object.entries(entries).map(([key, e]) => ({ ...e, key, family, section }) as Listed))

export type { AnyEntry, ApiEntry, OAuthEntry, PageEntry, RpcEntry, UpgradeEntry }
