// Who is calling: the one shape every door resolves a credential to.
export interface Principal {
  kind: 'key' | 'oauth' | 'console'
  /** the agent (or user, for the console) acting */
  principalId: string
  /** the key or grant id that authenticated the call */
  credentialId: string
  /** the human-readable name of the key/grant */
  name: string
}

export interface AuthContext {
  orgId: string
  agentId: string
  scopes: ReadonlySet<string>
  principal: Principal
  userId?: string
}
