// The driving actions the node runs, one per driving contract (contracts/operations/
// drive.ts). Each action file exports its own rows; the table's type is derived from the
// contract list, so declaring a new driving action there does not compile until one of
// the files below implements it (adding one to an existing file touches that file only).
import { perceive } from '../perception.ts'
import type { ActionTable } from './types.ts'
import { pageActions } from './act.ts'
import { captureActions } from './capture.ts'
import { navigationActions } from './navigation.ts'
import { tabActions } from './pages.ts'
import { mouseActions } from './mouse.ts'
import { fileActions } from './files.ts'
import { inspectActions } from './inspect.ts'

export type { Action, ActionTable } from './types.ts'

export const actions: ActionTable = {
  ...navigationActions,
  perceive,
  ...pageActions,
  ...captureActions,
  ...tabActions,
  ...mouseActions,
  ...fileActions,
  ...inspectActions,
}
