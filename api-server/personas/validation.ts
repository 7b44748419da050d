// Input rules shared by the persona operations. Every message names the field and
// the rule, never the value: a value sent here may be a secret pasted by mistake.
import { z } from 'zod'
import { normalizeHostEntry } from '../../contracts/hosts.ts'

export const OPEN_MODES = ['exclusive', 'fork', 'readonly'] as const
export type OpenMode = (typeof OPEN_MODES)[number]
export const GRANT_ROLES = ['assume', 'manage'] as const
export type GrantRole = (typeof GRANT_ROLES)[number]
export const PROPAGATIONS = ['none', 'same_conversation', 'descendants'] as const
export type Propagation = (typeof PROPAGATIONS)[number]
export const ORG_ROLES = ['owner', 'admin', 'member'] as const

/** Path ids: any short string; an unknown or foreign one is the same 404 later. */
export const idParam = z.string().min(1).max(100)

// Identity names double as a session_start reference, so one that looks like an id
// (nident_…) would make "id or name" ambiguous.
export const identityName = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9 ._@+-]{0,62}[A-Za-z0-9._@+-])?$/, 'must be 1-64 letters, digits, spaces or . _ @ + - (no leading or trailing space)')
  .refine((s) => !s.startsWith('nident_'), 'must not start with nident_')

// Credential names appear inside {{credential:<name>}}, so no braces or spaces.
export const credentialName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits or . _ - (starting with a letter or digit)')

export const secretValue = z.string().min(1, 'must not be empty').max(4096, 'must be at most 4096 characters')

export const placeholderFor = (name: string) => `{{credential:${name}}}`

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/
export const rfc3339 = z
  .string()
  .refine((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)), 'must be an RFC 3339 timestamp with a time zone, e.g. 2030-01-01T00:00:00Z')

/**
 * A list of hosts (each optionally with :port), normalised and de-duplicated.
 * URLs, paths, wildcards, userinfo and empty strings are refused, by index.
 */
export const hostList = z
  .array(z.string().max(260))
  .max(100, 'must list at most 100 hosts')
  .transform((entries, ctx) => {
    const out: string[] = []
    entries.forEach((entry, i) => {
      const n = normalizeHostEntry(entry)
      if (n === null) {
        ctx.addIssue({ code: 'custom', path: [i], message: 'must be a host, optionally with :port (no scheme, path, wildcard or userinfo)' })
      } else if (!out.includes(n)) out.push(n)
    })
    return out
  })

export const maxSessionDurationSecs = z.number().int('must be an integer').positive('must be a positive integer').max(2147483647).nullable()
