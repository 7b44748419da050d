// The setup pages of the console (setting up without curl), registered
// together: Identities with their credentials and grants, Networks, Governance, Webhooks.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import type { ConsolePageKit } from './page-kit.ts'
import type { SetupKit } from './setup-kit.ts'
import { registerIdentityPages } from './setup-identities.ts'
import { registerNetworkPages } from './setup-networks.ts'
import { registerGovernancePage } from './setup-governance.ts'
import { registerWebhookPages } from './setup-webhooks.ts'

export function registerSetupPages(app: FastifyInstance, services: Services, pageKit: ConsolePageKit) {
  const kit: SetupKit = { ...pageKit, services, base: services.config.consolePath }
  registerIdentityPages(app, kit)
  registerNetworkPages(app, kit)
  registerGovernancePage(app, kit)
  registerWebhookPages(app, kit)
}
