// The driving actions the node runs, one per driving contract (contracts/operations/
// drive.ts). Each action file exports its own rows; the table's type is derived from the
// contract list, so declaring a new driving action there does not compile until one of
// the files below implements it (adding one to an existing file touches that file only).
//
// The page-changing actions (their contracts take `changes`: pageChangingDrives) answer
// with `changes` as well (perception/perceive.ts changesAfter): what the action did to the page,
// with refs, so an agent needs one call per step. The node reads it only when asked
// (`changes: true`): the api-server asks unless the agent turned it off with
// `changes: false` (operations/sessions/drive.ts).
import { changesAfter, perceive } from '../perception/perceive.ts'
import type { DriveName, NodeInput, NodeOutput } from '../../contracts/node-api.ts'
import { pageChangingDrives } from '../../contracts/operations/drive.ts'
import type { Action, ActionTable } from './types.ts'
import { pageActions } from './act.ts'
import { captureActions } from './capture.ts'
import { navigationActions } from './navigation.ts'
import { tabActions } from './pages.ts'
import { mouseActions } from './mouse.ts'
import { fileActions } from './files.ts'
import { inspectActions } from './inspect.ts'

export type { Action, ActionTable } from './types.ts'

function withChanges<N extends DriveName>(action: Action<N>): Action<N> {
  return async (session, input) => {
    const out = await action(session, input)
    if ((input as NodeInput<N> & { changes?: boolean }).changes !== true) return out
    const changes = await changesAfter(session)
    return (changes === undefined ? out : { ...out, changes }) as NodeOutput<N>
  }
}

const plain: ActionTable = {
  ...navigationActions,
  perceive,
  ...pageActions,
  ...captureActions,
  ...tabActions,
  ...mouseActions,
  ...fileActions,
  ...inspectActions,
}

export const actions: ActionTable = { ...plain }
for (const name of pageChangingDrives) (actions as Record<DriveName, unknown>)[name] = withChanges(plain[name])
