// Where to connect a CDP client to a session (contracts/operations/sessions.ts session_cdp).
// The connection itself is the WebSocket upgrade of the same path (api-server/cdp/relay.ts),
// which runs these checks again.
import { implement } from '../types.ts'
import { sessionCdp } from '../../../contracts/operations/sessions.ts'
import { cdpSession, cdpUrl } from '../../sessions/cdp-access.ts'
import { mintCdpToken } from '../../auth/cdp-url-token.ts'

export const sessionCdpOperation = implement(sessionCdp, {
  handler: async ({ auth, services }, { sessionId }) => {
    const row = await cdpSession(services, { auth, sessionId })
    const { token, expiresAt } = await mintCdpToken(services, { auth, sessionId: row.id })
    return {
      sessionId: row.id, url: cdpUrl(services.config.baseUrl, row.id), protocol: 'cdp' as const,
      httpUrl: `${services.config.baseUrl}/v1/sessions/${encodeURIComponent(row.id)}/cdp/${token}`, httpUrlExpiresAt: new Date(expiresAt).toISOString(),
    }
  },
})
