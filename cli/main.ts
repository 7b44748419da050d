// The `nightjar` command.
import { ConfigError } from '../contracts/config-error.ts'

const HELP = `nightjar — browser sessions for AI agents

  nightjar start                      run the service (embedded runtime, or NIGHTJAR_RUNTIME=kubernetes)
  nightjar admin bootstrap --org NAME --email EMAIL [--password P] [--json]
                                      create an org, its owner and an owner API key
  nightjar admin list-oauth-clients | revoke-oauth-client --id ncli_… | revoke-grant --id nkey_…
                                      OAuth operator commands
  nightjar daemon --network NAME --control-url URL [--network-token-file F] [--daemon-host H] [--daemon-id ID] [--ready-file F]
                                      join a network so hosted browsers reach this machine
  nightjar operator                   run the operator on a Kubernetes cluster (the Helm chart's operator)
  nightjar operator migrate-storage   rewrite every BrowserSession and Network at the CRDs' storage version, then
                                      trim their storedVersions (after an upgrade; docs/upgrades.md)
`

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv
  try {
    switch (cmd) {
      case 'start': {
        const { start } = await import('./start.ts')
        await start()
        return -1 // keeps running
      }
      case 'admin': {
        const { admin } = await import('./admin.ts')
        return await admin(rest)
      }
      case 'daemon': {
        const { daemonMain } = await import('./daemon.ts')
        return await daemonMain(rest)
      }
      case 'operator': {
        const { operator } = await import('./operator.ts')
        return await operator(rest)
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(HELP)
        return 0
      default:
        process.stderr.write(`nightjar: unknown command: ${cmd}\n${HELP}`)
        return 2
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`nightjar: ${e.message}\n`)
      return 1
    }
    throw e
  }
}
