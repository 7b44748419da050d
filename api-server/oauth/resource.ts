// The issuer and the one protected resource of this deployment. Both derive from
// NIGHTJAR_BASE_URL (already stripped of trailing slashes by config), so the issuer
// in the RFC 8414 document is byte-identical to the PRM's authorization_servers entry,
// and a token's audience names exactly this deployment's /mcp.
import type { Config } from '../config.ts'
import { oauthErrors } from '../../contracts/errors.ts'

export function issuer(config: Config): string {
  return config.baseUrl
}

export function canonicalResource(config: Config): string {
  return `${config.baseUrl}/mcp`
}

/**
 * RFC 8707 resource indicator: absent means this deployment's resource; one trailing
 * slash is forgiven (clients disagree on it); anything else is invalid_target.
 */
export function checkResource(config: Config, requested: string | undefined): string {
  const canonical = canonicalResource(config)
  if (requested === undefined) return canonical
  const normalised = requested.endsWith('/') ? requested.slice(0, -1) : requested
  if (normalised !== canonical) throw oauthErrors.oauthUnknownResource(canonical)
  return canonical
}
