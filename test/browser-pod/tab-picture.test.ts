// A tab's picture (browser-pod/tab-picture.ts) against real Chromium: a still page gives
// one; a renderer that cannot paint (its script never yields) answers no screenshot, and
// a cross-site navigation swapping it out gives the wait up — the video's end once hung
// on such a screenshot until the api-server's pod timeout. Its own bound is set far past
// the test's, so only the navigation can end the wait.
import t from 'tap'
import { tabPicture } from '../../browser-pod/tab-picture.ts'
import { startPagePod } from './harness.ts'

const BUSY = `<!doctype html><p>busy</p><script>
  setTimeout(() => { console.log('spinning'); for (;;) {} }, 0)
</script>`

t.test('[ISSUE-51] a still page gives its picture', async (t) => {
  const { pod } = await startPagePod(t, 'nsess_picturestill', 'still.example', '<!doctype html><p>still</p>')
  const page = pod.session.page
  await page.goto('http://still.example/')
  const cdp = await page.context().newCDPSession(page)
  const shot = await tabPicture(page, cdp, 70, 10 * 60_000)
  t.ok(shot && Buffer.from(shot, 'base64').subarray(0, 2).equals(Buffer.from([0xff, 0xd8])), 'a JPEG')
  await cdp.detach()
})

t.test('[ISSUE-51] a screenshot a swapped-out renderer never answers is given up at the navigation', async (t) => {
  const { pod } = await startPagePod(t, 'nsess_picturebusy', 'busy.example', BUSY)
  const ctx = pod.session.context!
  await ctx.route('http://other.example/**', (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><p>other site</p>' }))
  const page = pod.session.page
  // the page says so in the task that then never yields
  const spinning = new Promise<void>((resolve) => page.on('console', (m) => m.text() === 'spinning' && resolve()))
  await page.goto('http://busy.example/', { waitUntil: 'commit' })
  await spinning
  const cdp = await page.context().newCDPSession(page)
  const picture = tabPicture(page, cdp, 70, 10 * 60_000)
  await page.goto('http://other.example/')
  t.equal(await picture, undefined, 'no picture, and no wait past the navigation')
  t.equal(await page.textContent('p'), 'other site')
})
