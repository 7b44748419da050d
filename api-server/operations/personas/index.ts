// Every persona operation, in the order tools are listed.
import { identityListAssumable } from './assumable.ts'
import { identityOperations } from './identities.ts'
import { credentialOperations } from './credentials.ts'
import { grantOperations } from './grants.ts'
import { governanceOperations } from './governance.ts'

export const personaOperations = [identityListAssumable, ...identityOperations, ...credentialOperations, ...grantOperations, ...governanceOperations]
