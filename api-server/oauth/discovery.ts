// Discovery, no authentication: RFC 9728 protected-resource metadata (at the
// path-suffixed location for /mcp and at the root, since clients try both) and RFC
// 8414 authorization-server metadata. The issuer is the base URL, byte-identical in
// both documents: clients compare them as strings.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import { OAUTH_DEFAULT_SCOPES } from '../auth/scopes.ts'
import { SUPPORTED_GRANT_TYPES } from './constants.ts'
import { canonicalResource, issuer } from './resource.ts'

export function protectedResourceMetadata(services: Services) {
  return {
    resource: canonicalResource(services.config),
    authorization_servers: [issuer(services.config)],
    scopes_supported: [...OAUTH_DEFAULT_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Nightjar MCP',
  }
}

export function authorizationServerMetadata(services: Services) {
  const base = services.config.baseUrl
  return {
    issuer: issuer(services.config),
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    device_authorization_endpoint: `${base}/oauth/device`,
    revocation_endpoint: `${base}/oauth/revoke`,
    ...(services.config.oauthDcrEnabled ? { registration_endpoint: `${base}/oauth/register` } : {}),
    response_types_supported: ['code'],
    grant_types_supported: [...SUPPORTED_GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...OAUTH_DEFAULT_SCOPES],
    // RFC 9207: the authorization response carries iss (mix-up defence)
    authorization_response_iss_parameter_supported: true,
    // a client_id may be the https URL of the client's metadata document (cimd.ts)
    client_id_metadata_document_supported: true,
  }
}

export function registerDiscovery(app: FastifyInstance, services: Services) {
  const prm = async () => protectedResourceMetadata(services)
  app.get('/.well-known/oauth-protected-resource', prm)
  app.get('/.well-known/oauth-protected-resource/mcp', prm)
  app.get('/.well-known/oauth-authorization-server', async () => authorizationServerMetadata(services))
}
