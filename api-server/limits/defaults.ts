// Defaults of every abuse limit (docs/abuse-limits.md); config.ts reads the
// NIGHTJAR_* overrides. A leaf module: config.ts imports it.
export const LIMIT_DEFAULTS = {
  /** console sign-in: this many failures in a row lock the account (the first lock) */
  loginLockoutThreshold: 5,
  /** the first lock; doubles with each further failure */
  loginLockoutBaseSecs: 30,
  /** the longest lock */
  loginLockoutMaxSecs: 900,
  /** console sign-in: failed attempts per client address per window */
  loginIpLimit: 30,
  loginIpWindowSecs: 900,
  /** POST /oauth/device per client address per window */
  deviceLimit: 20,
  deviceWindowSecs: 60,
  /** wrong user codes at the verification page, per account and per address, per window */
  userCodeLimit: 10,
  userCodeWindowSecs: 300,
  /** rejected join tokens at /ws/control per client address per window */
  joinFailureLimit: 20,
  joinFailureWindowSecs: 300,
  /** rejected join tokens for one network (from any address) per the same window; then 429 instead of 401 */
  joinNetworkFailureLimit: 100,
  /** requests whose Bearer token does not resolve, per client address per window (then 429 instead of 401) */
  bearerFailureLimit: 100,
  bearerFailureWindowSecs: 60,
} as const

export type LimitSettings = { -readonly [K in keyof typeof LIMIT_DEFAULTS]: number }
