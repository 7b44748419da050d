// The type of the pod's action table: one action per driving contract.
import type { DriveName, PodInput, PodOutput } from '../../contracts/pod-api.ts'
import type { PodSession } from '../session.ts'

export type Action<N extends DriveName> = (session: PodSession, input: PodInput<N>) => Promise<PodOutput<N>> | PodOutput<N>
export type ActionTable = { [N in DriveName]: Action<N> }
