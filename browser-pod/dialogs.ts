// JavaScript dialogs. A dialog is modal (the page and any waiting Playwright call stall),
// so each is answered the moment it opens: with dialog_handle's armed answer, if any, else
// by the default (alert closed, confirm/prompt dismissed, beforeunload accepted). No tool
// call can hang on a dialog. Each is reported (kept here and in the console log), masked
// by the echo guard like any page text.
import type { Dialog, Page } from 'playwright-core'
import type { PodOutput } from '../contracts/pod-api.ts'

export type DialogEntry = PodOutput<'dialog_handle'>['dialogs'][number]
type DialogType = DialogEntry['type']
export type DialogAction = 'accept' | 'dismiss'

/** How many answered dialogs are kept. */
export const DIALOG_HISTORY = 20

interface Armed {
  action: DialogAction
  promptText?: string
}

type Listener = (page: Page | null, entry: DialogEntry) => void

export class SessionDialogs {
  #armed: Armed | undefined
  readonly #history: DialogEntry[] = []
  readonly #listeners = new Set<Listener>()

  private readonly report: (text: string) => void
  private readonly now: () => number
  constructor(
    report: (text: string) => void,
    now: () => number = Date.now,
  ) {
    this.report = report
    this.now = now
  }

  /** Arms the answer to the next dialog, in any tab (replacing an answer armed before). */
  arm(action: DialogAction, promptText?: string): void {
    this.#armed = { action, promptText }
  }

  /** The armed answer, if any (never the prompt text: it is the caller's own input). */
  get armed(): { action: DialogAction } | null {
    return this.#armed ? { action: this.#armed.action } : null
  }

  /** The latest dialogs, oldest first. */
  get recent(): DialogEntry[] {
    return [...this.#history]
  }

  /** Calls `listener` after each dialog is answered, until the returned function is called. */
  watch(listener: Listener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The dialog listener of every page: answers `dialog` at once and reports it. */
  async answer(dialog: Dialog, tabId: string): Promise<void> {
    const armed = this.#armed
    this.#armed = undefined
    const type = dialogType(dialog.type())
    const accept = armed ? armed.action === 'accept' : type === 'beforeunload'
    const entry: DialogEntry = {
      tabId,
      type,
      message: dialog.message(),
      ...(type === 'prompt' ? { defaultValue: dialog.defaultValue() } : {}),
      answer: accept ? 'accepted' : 'dismissed',
      answeredBy: armed ? 'armed' : 'default',
      time: this.now(),
    }
    this.#history.push(entry)
    if (this.#history.length > DIALOG_HISTORY) this.#history.splice(0, this.#history.length - DIALOG_HISTORY)
    this.report(`${type}${tabId ? ` in ${tabId}` : ''}: ${entry.message} → ${entry.answer}${armed ? ' (as armed by dialog_handle)' : ' (by default: no answer was armed)'}`)
    try {
      // a prompt accepted without a text returns what it holds, as OK does in a browser
      if (accept) await dialog.accept(type === 'prompt' ? armed?.promptText ?? dialog.defaultValue() : undefined)
      else await dialog.dismiss()
    } catch {
      // the page (or the browser) closed with its dialog open: nothing is left to answer
    }
    for (const l of this.#listeners) l(dialog.page(), entry)
  }
}

function dialogType(t: string): DialogType {
  return t === 'confirm' || t === 'prompt' || t === 'beforeunload' ? t : 'alert'
}
