// The api-server's rows for the driving actions of contracts/operations/drive-mouse.ts:
// what the journal keeps of each (never typed text, page content or bytes). fill_form
// keeps its selectors and how many fields it filled, never a value.
import type { mouseContracts } from '../../../contracts/operations/drive-mouse.ts'
import type { DriveSpecs } from './drive-spec.ts'

export const mouseDrives: DriveSpecs<(typeof mouseContracts)[number]['name']> = {
  drag: { journal: ({ from, to, fromRef, toRef }) => ({ from, to, fromRef, toRef }) },
  mouse_click: { journal: ({ x, y, button, clickCount }) => ({ x, y, button, clickCount }) },
  mouse_move: { journal: ({ x, y, steps }) => ({ x, y, steps }) },
  mouse_wheel: { journal: ({ x, y, deltaX, deltaY }) => ({ x, y, deltaX, deltaY }) },
  fill_form: { journal: ({ fields }) => ({ selectors: fields.map((f) => f.selector ?? `ref=${f.ref}`), count: fields.length }) },
}
