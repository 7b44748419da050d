// Which child frame a ref prefix (`f2e3`) belongs to, read from Playwright's own frame object
// instead of a round trip to the page per frame (refs.ts childFramePrefix): in real Chromium,
// every child frame's refs carry the prefix that lookup gives, nested frames too, and a ref
// of each frame still acts in its own frame after the snapshot bound them that way.
import t from 'tap'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { childFramePrefix, locateRef } from '../../../browser-pod/perception/refs.ts'
import { takeSnapshot } from '../../../browser-pod/perception/snapshot.ts'
import type { AriaNode } from '../../../browser-pod/perception/render.ts'

/** the refs inside each iframe node of a snapshot (not those of its nested iframes), by the iframe's own ref */
function refsByFrame(roots: ReadonlyArray<AriaNode | string>): Map<string, string[]> {
  const out = new Map<string, string[]>()
  const collect = (nodes: ReadonlyArray<AriaNode | string>, into: string[]) => {
    for (const n of nodes) {
      if (typeof n === 'string') continue
      if (n.role === 'iframe') {
        const mine: string[] = []
        out.set(String(n.ref), mine)
        collect(n.children ?? [], mine)
        continue
      }
      if (n.ref) into.push(n.ref)
      collect(n.children ?? [], into)
    }
  }
  collect(roots, [])
  return out
}

t.test('[ISSUE-47] a child frame\'s ref prefix comes from Playwright\'s frame, and refs bound that way act in their own frame', async (t) => {
  const browser = await launchTestBrowser(t)
  const page = await browser.newPage()
  const attr = (html: string) => html.replaceAll('&', '&amp;').replaceAll('"', '&quot;')
  const inner = `<button onclick="parent.parent.clicked = 'inner'">Inner</button>`
  const pay = `<button onclick="parent.clicked = 'pay'">Pay now</button><iframe title=Nested srcdoc="${attr(inner)}"></iframe>`
  const help = `<a href="#returns" onclick="parent.clicked = 'help'">Returns</a>`
  await page.setContent(`<h1>Checkout</h1><button onclick="clicked = 'main'">Main</button>
    <iframe title=Payment srcdoc="${attr(pay)}"></iframe>
    <iframe title=Help srcdoc="${attr(help)}"></iframe>`)
  await page.waitForFunction(() => [...document.querySelectorAll('iframe')].every((f) => f.contentDocument?.readyState === 'complete' &&
    [...f.contentDocument.querySelectorAll('iframe')].every((g) => g.contentDocument?.readyState === 'complete' && g.contentDocument.querySelector('button'))))

  const children = page.frames().filter((f) => f !== page.mainFrame())
  t.equal(children.length, 3, 'two frames and one nested in the first')
  const prefixes = children.map((f) => childFramePrefix(f))
  t.ok(prefixes.every((p) => p !== undefined && /^f\d+$/.test(p)), 'Playwright\'s frame object gives every child frame a prefix (its internals have not moved)')
  t.equal(new Set(prefixes).size, 3, 'each its own')

  const json = await page.ariaSnapshotJSON({ mode: 'ai' })
  const roots = (Array.isArray(json) ? json : [json]) as Array<AriaNode | string>
  const byFrame = refsByFrame(roots)
  // each iframe's refs (outside its nested iframes) carry exactly one child frame's prefix
  t.equal(byFrame.size, 3, 'three iframes in the snapshot')
  const framePrefixes = new Set<string | undefined>()
  for (const [iframe, refs] of byFrame) {
    t.ok(refs.length > 0, `iframe ${iframe}: refs inside`)
    const seen = new Set(refs.map((r) => /^(f\d+)e\d+$/.exec(r)?.[1]))
    t.equal(seen.size, 1, `iframe ${iframe}: one prefix`)
    t.ok(prefixes.includes([...seen][0]), `iframe ${iframe}: a prefix the lookup gave`)
    framePrefixes.add([...seen][0])
  }
  t.equal(framePrefixes.size, 3, 'the three frames\' refs carry three prefixes')

  // the snapshot binds each prefix to its frame's document: a ref of each frame clicks there
  const snap = await takeSnapshot(page, 12_000)
  const refOf = (name: string) => snap.lines.find((l) => l.text.includes(`"${name}"`))?.ref
  for (const [name, where] of [['Main', 'main'], ['Pay now', 'pay'], ['Inner', 'inner'], ['Returns', 'help']] as const) {
    const ref = refOf(name)
    t.ok(ref, `${name} has a ref`)
    await (await locateRef(page, ref!)).click()
    t.equal(await page.evaluate(() => (globalThis as { clicked?: string }).clicked), where, `${name}'s ref acts in its own frame`)
  }
})
