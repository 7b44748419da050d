// `nightjar admin bootstrap`: creates an org, its owner and an owner API key.
// Works against the same data dir / DATABASE_URL as `npm start`, also while it runs.
import { loadConfig } from '../api-server/config.ts'
import { openDatabase } from '../api-server/store/open.ts'
import { bootstrapOrg } from '../api-server/auth/orgs.ts'
import { describeError, isApiError } from '../contracts/errors.ts'
import { parseFlags } from './flags.ts'
import { isOAuthAdminCommand, oauthAdmin, OAUTH_ADMIN_USAGE } from './oauth-admin.ts'

const USAGE = `usage: nightjar admin bootstrap --org NAME --email EMAIL [--password PASSWORD] [--json]
${OAUTH_ADMIN_USAGE}`

export async function admin(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  // OAuth operator commands (list-oauth-clients, revoke-oauth-client, revoke-grant)
  if (isOAuthAdminCommand(sub)) return oauthAdmin(sub!, rest)
  if (sub !== 'bootstrap') {
    process.stderr.write(USAGE + '\n')
    return 2
  }
  const flags = parseFlags(rest, { string: ['org', 'email', 'password'], boolean: ['json'] })
  if (flags.error || !flags.values.org || !flags.values.email) {
    process.stderr.write(`${flags.error ? flags.error + '\n' : ''}${USAGE}\n`)
    return 2
  }
  const config = loadConfig()
  const database = await openDatabase(config, (l) => process.stderr.write(`nightjar: ${l}\n`))
  try {
    const out = await bootstrapOrg(database.db, { org: String(flags.values.org), email: String(flags.values.email), password: flags.values.password as string | undefined })
    if (flags.values.json) {
      process.stdout.write(JSON.stringify({ orgId: out.orgId, userId: out.userId, agentId: out.agentId, email: out.email, password: out.password, apiKey: out.apiKey }) + '\n')
    } else {
      process.stdout.write(
        `org       ${out.orgId}\nuser      ${out.userId} (${out.email}, owner)\npassword  ${out.password}\napi key   ${out.apiKey}\n\n` +
          `The key and password are shown once. Sign in at ${config.baseUrl}${config.consolePath}\n`,
      )
    }
    return 0
  } catch (e) {
    if (isApiError(e)) {
      process.stderr.write(`nightjar: ${describeError(e)}\n`)
      return 1
    }
    throw e
  } finally {
    await database.close()
  }
}
