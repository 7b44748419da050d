// Snapshots built from AI-snapshot nodes, as snapshot.ts builds them from a page, for the
// unit tests of perception's pure parts (no browser). Refs are given as written.
import { flatten, shownUrl, type AriaNode } from '../../../browser-pod/perception/render.ts'
import type { Snapshot } from '../../../browser-pod/perception/snapshot.ts'

let taken = 0

/** A snapshot of a page holding `nodes`; each call is a new snapshot (its own id). */
export function snapshotOf(nodes: Array<AriaNode | string>, page: { url?: string; title?: string; text?: string; secrets?: string[] } = {}): Snapshot {
  return {
    id: `snap${++taken}`,
    url: page.url ?? 'https://shop.test/orders',
    shownUrl: shownUrl(page.url ?? 'https://shop.test/orders'),
    title: page.title ?? 'Orders',
    doc: 1,
    lines: flatten(nodes, { give: (r) => r, secrets: page.secrets ?? [] }),
    text: page.text ?? '',
    views: new Map(),
  }
}

/** An element node. */
export function el(role: string, name: string | undefined, ref: string, children: Array<AriaNode | string> = [], props: Record<string, unknown> = {}): AriaNode {
  return { role, ...(name === undefined ? {} : { name }), ref, ...(children.length ? { children } : {}), ...props }
}
