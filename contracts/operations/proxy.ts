// An upstream proxy as an operation takes it and shows it (docs/proxy.md): the URL
// without credentials, the credentials as their own write-only fields. Shared by
// session_start and an identity's default proxy.
import { z } from 'zod'
import { proxyUrlProblem } from '../proxy.ts'

export const proxySetting = z
  .strictObject({
    url: z.string().max(300).superRefine((u, ctx) => {
      const problem = proxyUrlProblem(u)
      if (problem) ctx.addIssue({ code: 'custom', message: problem })
    }).describe('http://, https:// (TLS to the proxy) or socks5:// host[:port]; no credentials in the URL'),
    username: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters')
      .refine((u) => !u.includes(':'), 'must not contain ":" (HTTP Basic cannot carry it)').optional().describe('write-only: sealed at once, never returned'),
    password: z.string().max(255, 'must be at most 255 characters').optional().describe('write-only: sealed at once, never returned'),
  })
  .refine((p) => p.password === undefined || p.username !== undefined, { message: 'a password needs a username', path: ['password'] })

export const proxyView = z.object({
  url: z.string().describe('scheme://host:port'),
  authenticated: z.boolean().describe('credentials are sealed for it (never shown)'),
})
