// Errors of the toolbox: CDP connect.
import type { ApiEntry, UpgradeEntry } from './entry.ts'

export const CDP_ERRORS = {
  cdpIdentityBound: {
    status: 403, code: 'forbidden', reason: 'cdp_identity_bound', message: 'CDP is not available on a session with a bound identity', spec: null,
    when: 'session_cdp, or the CDP upgrade, on a session bound to a persona: raw page access would read what the sealed fill typed',
  },
  cdpCloakBrowser: {
    status: 409, code: 'conflict', reason: 'cdp_cloak', message: 'CDP is not available on a cloak browser', spec: null,
    when: 'session_cdp, or the CDP upgrade, on a session of browserKind cloak',
  },
  cdpExtensions: {
    status: 409, code: 'conflict', reason: 'cdp_extensions', message: 'CDP is not available on a session that loads extensions (its pages run in a browser of their own, without a CDP pipe)', spec: null,
    when: 'session_cdp, or the CDP upgrade, on a session started with browser extensions (docs/extensions.md)',
  },
  cdpConnected: {
    status: 409, code: 'conflict', reason: 'cdp_connected', message: 'a CDP client is connected to this session; credential fill is refused until it disconnects', spec: null,
    when: 'at the pod: secure_type (credential_fill, a free-text credential fill) while a CDP client is connected to the session',
  },
  cdpRefused: {
    status: 403, code: 'forbidden', reason: 'cdp_refused', message: (why: string) => why, args: ['the CDP filter’s refusal'], spec: null,
    when: 'a CDP discovery route that acts (/json/new, /json/activate, /json/close) whose command the CDP filter refuses: a chrome:// or file:// URL, one of Chromium’s own pages',
  },
  cdpDiscoveryUnavailable: {
    status: 503, code: 'unavailable', reason: 'cdp_unavailable', message: 'CDP is not available for this session', spec: null,
    when: 'a CDP discovery route (/json/version, /json/list …) while the pod cannot open a CDP session: not ready, closing, or a credential was filled in the session',
  },
} as const satisfies Record<string, ApiEntry>

/** Refusals of the CDP WebSocket upgrade, before any WebSocket exists. */
export const CDP_UPGRADE_ERRORS = {
  cdpPodUnauthorized: {
    status: 401, code: null, reason: null, message: 'unauthorized', spec: null,
    when: 'a pod\'s /v1/cdp upgrade without the session\'s pod token',
  },
  cdpAfterFill: {
    status: 403, code: null, reason: null, message: 'CDP is refused on a session a credential was filled in', spec: null,
    when: 'at the pod: a CDP upgrade while a credential fill runs or after one happened in the session (the api-server refuses identity-bound sessions before that)',
  },
  cdpUnknownTarget: {
    status: 404, code: null, reason: null, message: 'no such target in this session', spec: null,
    when: 'a CDP page endpoint (/devtools/page/<id>) naming a target the session does not have, or one of Chromium\'s own pages',
  },
  cdpUnavailable: {
    status: 503, code: null, reason: null, message: 'CDP is not available for this session', spec: null,
    when: 'the pod has no DevTools endpoint or is not configured yet or is closing, or the api-server could not open the pod\'s CDP socket',
  },
} as const satisfies Record<string, UpgradeEntry>
