// The driving actions the pod runs, one per driving contract (contracts/operations/drive.ts);
// the table's type is derived from the contract list, so a new contract does not compile
// until an action implements it. Page-changing actions answer with `changes` when asked
// (the api-server asks unless the agent said `changes: false`), so an agent needs one call
// per step.
import { changesAfter, perceive } from '../perception/perceive.ts'
import type { DriveName, PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { pageChangingDrives } from '../../contracts/operations/drive.ts'
import type { Action, ActionTable } from './types.ts'
import { elementActions } from './act.ts'
import { captureActions } from './capture.ts'
import { navigationActions } from './navigation.ts'
import { tabActions } from './tabs.ts'
import { mouseActions } from './mouse.ts'
import { fileActions } from './files.ts'
import { inspectActions } from './inspect.ts'

export type { Action, ActionTable } from './types.ts'

function withChanges<N extends DriveName>(action: Action<N>): Action<N> {
  return async (session, input) => {
    const out = await action(session, input)
    if ((input as PodInput<N> & { changes?: boolean }).changes !== true) return out
    const changes = await changesAfter(session)
    return (changes === undefined ? out : { ...out, changes }) as PodOutput<N>
  }
}

const plain: ActionTable = {
  ...navigationActions,
  perceive,
  ...elementActions,
  ...captureActions,
  ...tabActions,
  ...mouseActions,
  ...fileActions,
  ...inspectActions,
}

export const actions: ActionTable = { ...plain }
for (const name of pageChangingDrives) (actions as Record<DriveName, unknown>)[name] = withChanges(plain[name])
