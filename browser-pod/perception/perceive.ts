// The perceive action and the `changes` of page-changing actions: the only entry points of
// perception. Each takes a snapshot of the active tab, keeps it as the tab's latest (what
// cursors read and the next action is diffed against) and answers from the pure parts.
// How perception reads a page: docs/perception.md.
import { randomBytes } from 'node:crypto'
import type { Page } from 'playwright-core'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'
import { firstPart, framing, pageSummary, readOn, subtree, walk } from './cursor.ts'
import { diffSnapshots } from './diff.ts'
import { queryView } from './query.ts'
import { documentsVersion, settled, pageVersion, worthReadingEarly } from './page-watch.ts'
import { quoted, treeCost } from './render.ts'
import { takeSnapshot, type Snapshot } from './snapshot.ts'
import { readViewport } from './viewport.ts'

/** perceive's budget when the caller gives none (characters of snapshot and text) */
export const DEFAULT_MAX_CHARS = 12_000
/** the budget of an action's `changes` */
export const CHANGES_MAX_CHARS = 3_000
/** up to this, an action's `changes` give each added element's subtree whole; past it, each
 * added element's line and how many it holds (diff.ts): a render an agent did not ask to
 * read (an opened panel, an expanded tree) costs a line, not the budget */
export const CHANGES_FULL_CHARS = 1_000
/** a new page's `changes`: the whole page when it fits this, else what it is (cursor.ts pageSummary) */
export const NEW_PAGE_MAX_CHARS = 1_200

/** per tab: its last snapshot */
const latest = new WeakMap<Page, Snapshot>()

export async function perceive(session: PodSession, input: PodInput<'perceive'> = {}): Promise<PodOutput<'perceive'>> {
  const page = session.page
  let budget = input.maxChars ?? DEFAULT_MAX_CHARS
  try {
    if (input.cursor !== undefined) return readOn(latest.get(page), input.cursor, budget)
    const snap = await currentSnapshot(session, budget)
    latest.set(page, snap)
    const head = { url: snap.shownUrl, title: snap.title }
    // the answer's own lines (url, title, the cursor's note) are counted too
    budget -= framing(snap)
    if (input.ref !== undefined) return { ...head, ...walk(snap, `r${input.ref}`, subtree(snap, input.ref), 0, budget) }
    if (input.query !== undefined) {
      const { key, view, count } = queryView(snap.lines, input.query, budget)
      if (!view.length) return { ...head, snapshot: `# nothing on the page matches ${quoted(input.query)}`, text: '', truncated: false }
      const note = key === 'c' ? `# ${count} matches of ${quoted(input.query)}, each once with the element to act on (what defines it first, then the whole phrase, then those to act on)\n` : ''
      return { ...head, ...walk(snap, key, view, 0, budget, note) }
    }
    await readViewport(page, snap, budget)
    return { ...head, ...firstPart(snap, budget) }
  } catch (e) {
    throw actionError(e, 'perceive')
  }
}

/**
 * The tab's latest snapshot when the page has not changed since it was taken (perceive right
 * after a navigation or an action that answered with `changes`), else a new one. A kept
 * snapshot comes back under a new id with no views, so cursors of earlier answers are stale
 * as after any other read.
 */
async function currentSnapshot(session: PodSession, budget: number): Promise<Snapshot> {
  const page = session.page
  const kept = latest.get(page)
  const version = page.frames().length === 1 ? await pageVersion(page) : undefined
  // the text is there when it was read, or not wanted when the tree alone is over this budget
  if (kept?.version !== undefined && kept.version === version && kept.url === page.url() && (kept.textRead || treeCost(kept.lines) >= budget)) {
    return { ...kept, id: randomBytes(6).toString('base64url'), views: new Map() }
  }
  return takeSnapshot(page, budget, (s) => session.echoGuard.redact(s), version)
}

/**
 * A snapshot taken now, with every document's version (frames' too, documentsVersion) read just
 * before its tree: it stands while that version does. Undefined when it cannot be checked (a
 * frame in another process) or taken: then the page is read after it settled.
 */
async function readEarly(session: Pick<PodSession, 'page' | 'echoGuard'>): Promise<{ snapshot: Snapshot; documents: string } | undefined> {
  const documents = await documentsVersion(session.page)
  if (documents === undefined) return undefined
  const snapshot = await takeSnapshot(session.page, DEFAULT_MAX_CHARS, (s) => session.echoGuard.redact(s)).catch(() => undefined)
  return snapshot && { snapshot, documents }
}

/**
 * Snapshots the active tab after an action and says what changed since the tab's last
 * snapshot (diff.ts), within CHANGES_MAX_CHARS, once the page has settled (page-watch.ts).
 * A new document (or a tab never read) is answered with what it is instead (`new page:
 * "title" url`, then cursor.ts pageSummary). Undefined when the page cannot be read now.
 */
export async function changesAfter(session: Pick<PodSession, 'page' | 'echoGuard'>): Promise<string | undefined> {
  const page = session.page
  if (page.isClosed()) return undefined
  await page.waitForLoadState('domcontentloaded', { timeout: 5000 }).catch(() => {}) // a page still loading is read as far as it got
  // A page that renders from script after its load is read once it has rendered, so its refs
  // hold (page-watch.ts settled). A small page that is likely done already is read while that
  // quiet window runs, and the read stands when the page did not change from its start to the
  // window's end and the read's: the window no longer adds a snapshot's time on top of its own
  const settling = settled(page)
  const early = (await worthReadingEarly(page)) ? readEarly(session) : undefined
  const version = await settling
  const read = await early
  // read again once the window and the read are both over: a change during either throws the read away
  let next = read && (await documentsVersion(page)) === read.documents ? read.snapshot : undefined
  if (next === undefined) {
    try {
      next = await takeSnapshot(page, DEFAULT_MAX_CHARS, (s) => session.echoGuard.redact(s), version)
    } catch {
      return undefined
    }
  }
  const before = latest.get(page)
  latest.set(page, next)
  if (!before || before.doc !== next.doc) return `new page: ${quoted(next.title)} ${next.shownUrl}\n${pageSummary(next, NEW_PAGE_MAX_CHARS)}`
  return diffSnapshots(before, next, CHANGES_MAX_CHARS, CHANGES_FULL_CHARS)
}
