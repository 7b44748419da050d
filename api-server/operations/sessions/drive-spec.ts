// What a driving action's row in the api-server's table says: what the journal keeps of
// it, what is sent, and how its result reads over MCP. drive.ts holds the core rows and
// merges one table per domain file (drive-<domain>.ts), typed from the contracts.
import type { z } from 'zod'
import type { McpContent, OpContext } from '../types.ts'
import type { driveContracts, DriveName } from '../../../contracts/operations/drive.ts'

export type DriveContractOf<N extends DriveName> = Extract<(typeof driveContracts)[number], { name: N }>
/** what the pod is sent for the action: the operation's input without sessionId */
export type PodInputOf<N extends DriveName> = Omit<z.output<DriveContractOf<N>['input']>, 'sessionId'>
export type ResultOf<N extends DriveName> = z.output<DriveContractOf<N>['output']>

/** What the journal keeps of a URL: scheme, host and path — never the query or fragment. */
export function journalUrl(u: string): string {
  try {
    const x = new URL(u)
    if (x.protocol === 'data:') return 'data:'
    return `${x.protocol}//${x.host}${x.pathname}`
  } catch {
    return '(invalid)'
  }
}

export interface DriveSpec<N extends DriveName> {
  /** what the journal records: selectors, verbs, urls (journalUrl) and sizes — never typed text, secrets or page content */
  journal: (input: PodInputOf<N>) => Record<string, unknown>
  /** what the pod is sent, when not the whole input */
  send?: (input: PodInputOf<N>) => Partial<PodInputOf<N>>
  /** takes the call over instead of forwarding it (act's free-text credential path); null forwards */
  divert?: (ctx: OpContext, sessionId: string, input: PodInputOf<N>, detail: Record<string, unknown>) => Promise<ResultOf<N>> | null
  /** how the result reads as an MCP tool result, when not JSON text */
  toMcp?: (result: ResultOf<N>) => McpContent
}

/** The rows of some driving actions (one domain file's). */
export type DriveSpecs<K extends DriveName> = { [N in K]: DriveSpec<N> }

/**
 * What the domain's driving and fill functions are given, out of the handler's context:
 * the services they use and the logger (the domain takes `(deps, request)`, never OpContext).
 */
export function driveDeps(ctx: OpContext) {
  const { db, now, sealer, sessions, activity } = ctx.services
  return { db, now, sealer, sessions, activity, log: ctx.log }
}

/** For actions whose journal row has no detail. */
export const nothing = () => ({})
