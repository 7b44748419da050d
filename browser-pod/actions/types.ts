// The type of the node's action table: one action per driving contract.
import type { DriveName, NodeInput, NodeOutput } from '../../contracts/node-api.ts'
import type { PodSession } from '../session.ts'

export type Action<N extends DriveName> = (session: PodSession, input: NodeInput<N>) => Promise<NodeOutput<N>> | NodeOutput<N>
export type ActionTable = { [N in DriveName]: Action<N> }
