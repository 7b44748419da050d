// The driving actions the node runs, one per driving contract (contracts/operations/
// drive.ts). The table's type is derived from that list: declaring a new driving action
// there does not compile until it has an implementation here.
import type { DriveName, NodeInput, NodeOutput } from '../../contracts/node-api.ts'
import { perceive } from '../perception.ts'
import type { PodSession } from '../session.ts'
import { act, hover, selectOption, waitFor } from './act.ts'
import { consoleMessages, pdf, screenshot } from './capture.ts'
import { goBack, navigate, reload } from './navigation.ts'

export type Action<N extends DriveName> = (session: PodSession, input: NodeInput<N>) => Promise<NodeOutput<N>> | NodeOutput<N>

export const actions: { [N in DriveName]: Action<N> } = {
  navigate,
  perceive,
  act,
  screenshot,
  go_back: goBack,
  reload,
  wait_for: waitFor,
  select_option: selectOption,
  hover,
  pdf,
  console_messages: consoleMessages,
}
