// Operator commands for OAuth, dispatched by `nightjar admin`: list-oauth-clients [--json],
// revoke-oauth-client --id ncli_… (its grants too; not the built-in client), revoke-grant
// --id nkey_…. They open the database like `admin bootstrap` and work while the server
// runs: every Bearer check reads the grant, so a revocation holds from the next request.
import { loadConfig } from '../api-server/config.ts'
import { openDatabase } from '../api-server/store/open.ts'
import { listOAuthClients, revokeOAuthClient, revokeOAuthGrant } from '../api-server/oauth/admin.ts'
import { BUILTIN_CLIENT_ID } from '../api-server/oauth/constants.ts'
import { parseFlags } from './flags.ts'

export const OAUTH_ADMIN_COMMANDS = ['list-oauth-clients', 'revoke-oauth-client', 'revoke-grant'] as const

export const OAUTH_ADMIN_USAGE = `       nightjar admin list-oauth-clients [--json]
       nightjar admin revoke-oauth-client --id ncli_…
       nightjar admin revoke-grant --id nkey_…`

export function isOAuthAdminCommand(sub: string | undefined): boolean {
  return (OAUTH_ADMIN_COMMANDS as readonly string[]).includes(sub ?? '')
}

export async function oauthAdmin(sub: string, argv: string[]): Promise<number> {
  const out = (s: string) => process.stdout.write(s + '\n')
  const fail = (s: string, code = 1) => { process.stderr.write(`nightjar: ${s}\n`); return code }
  const flags = parseFlags(argv, sub === 'list-oauth-clients' ? { boolean: ['json'] } : { string: ['id'] })
  if (flags.error) return fail(`${flags.error}\nusage: ${OAUTH_ADMIN_USAGE.trimStart()}`, 2)
  const id = typeof flags.values.id === 'string' ? flags.values.id : ''
  if (sub === 'revoke-oauth-client' && !/^ncli_\w{1,60}$/.test(id)) return fail('revoke-oauth-client needs --id ncli_…', 2)
  if (sub === 'revoke-grant' && !/^nkey_\w{1,60}$/.test(id)) return fail('revoke-grant needs --id nkey_…', 2)

  const database = await openDatabase(loadConfig(), (l) => process.stderr.write(`nightjar: ${l}\n`))
  try {
    const now = Date.now()
    if (sub === 'list-oauth-clients') {
      const clients = await listOAuthClients(database.db)
      if (flags.values.json) {
        out(JSON.stringify(clients))
        return 0
      }
      out(['CLIENT ID'.padEnd(28), 'KIND'.padEnd(10), 'STATE'.padEnd(8), 'GRANTS'.padEnd(6), 'CREATED'.padEnd(24), 'NAME'].join(' '))
      for (const c of clients) {
        out([c.clientId.padEnd(28), (c.builtin ? 'built-in' : 'dynamic').padEnd(10), (c.revokedAt ? 'revoked' : 'active').padEnd(8), String(c.activeGrants).padEnd(6), c.createdAt.padEnd(24), c.name].join(' '))
      }
      return 0
    }
    if (sub === 'revoke-oauth-client') {
      const r = await revokeOAuthClient(database.db, id, now)
      if (!r.ok && r.reason === 'builtin') return fail(`${BUILTIN_CLIENT_ID} is the built-in client and cannot be revoked; revoke its grants with revoke-grant --id nkey_…`)
      if (!r.ok) return fail(`no OAuth client ${id}`)
      out(`${r.alreadyRevoked ? 'client was already revoked' : 'revoked client'} ${id}; revoked ${r.grantsRevoked} grant(s)`)
      return 0
    }
    const ok = await revokeOAuthGrant(database.db, id, now)
    if (!ok) return fail(`no OAuth grant ${id}`)
    out(`revoked grant ${id}; every token it issued stops now`)
    return 0
  } finally {
    await database.close()
  }
}
