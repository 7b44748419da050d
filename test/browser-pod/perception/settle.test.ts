// When a page that renders from script has settled (page-watch.ts), in real Chromium and
// with a real HTTP server: the DOM is read the moment `settled` answers, so a page still
// showing its loading state at that moment is a wrong answer the agent would have acted on.
import t, { type Test } from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { settled, watchDocuments } from '../../../browser-pod/perception/page-watch.ts'

/** A loopback server of fixed pages; `/api/*` answers its JSON after `delayMs`. */
async function serve(t: Test, pages: Record<string, string>, data: { body: string; delayMs: number }): Promise<string> {
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/api/')) {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(data.body), data.delayMs)
      return
    }
    const page = pages[req.url ?? '']
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html' }).end(page ?? 'no such page')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('[ISSUE-47] a page that renders a moment after data slower than the quiet window is read once it rendered', async (t) => {
  // the data takes 400 ms (four quiet windows with no change), and the page renders 60 ms
  // after it came: the quiet has to count from the data, not from the last change before it
  const late = `<main id=app>Loading</main><script>
    fetch('/api/items').then((r) => r.json()).then((items) => setTimeout(() => { document.getElementById('app').textContent = items.join(' ') }, 60))
  </script>`
  // progress every 60 ms, the data fetched midway (what a busy machine makes of any app: the
  // fetch outlasts the quiet window), then rendered
  const progress = `<main id=app>Loading</main><script>
    const app = document.getElementById('app')
    let step = 0, items = []
    const next = async () => {
      step++
      app.textContent = 'Loading step ' + step
      if (step === 4) items = await (await fetch('/api/items')).json()
      if (step < 8) setTimeout(next, 60)
      else app.textContent = items.join(' ')
    }
    addEventListener('load', () => setTimeout(next, 60))
  </script>`
  const base = await serve(t, { '/late': late, '/progress': progress }, { body: '["Alpha","Bravo"]', delayMs: 400 })
  const browser = await launchTestBrowser(t)
  const page = await browser.newPage()
  for (const path of ['/late', '/progress']) {
    await watchDocuments(page)
    await page.goto(base + path, { waitUntil: 'load' })
    await settled(page)
    t.equal(await page.evaluate(() => document.getElementById('app')!.textContent), 'Alpha Bravo', `${path}: read as rendered, not loading`)
  }
})
