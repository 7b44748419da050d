// A picture of a tab as it is now (CDP Page.captureScreenshot), for the screencasts of the
// live view and the video: a still page paints no screencast frame. Chromium never answers
// a screenshot whose renderer a cross-site navigation swaps out meanwhile, so the answer is
// given up when the main frame navigates (the new document paints frames of its own), the
// page closes or crashes, or the CDP session detaches; a page whose script never yields
// paints nothing either, so past `maxMs` too. Design: docs/sessions.md#video
import type { CDPSession, Frame, Page } from 'playwright-core'

/** The tab's picture (JPEG, base64), or undefined when none is coming. Never rejects. */
export function tabPicture(page: Page, cdp: CDPSession, quality: number, maxMs = 5_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const done = (data?: string) => {
      page.off('framenavigated', navigated)
      page.off('close', gone)
      page.off('crash', gone)
      clearTimeout(timer)
      resolve(data)
    }
    const gone = () => done()
    const navigated = (f: Frame) => {
      if (f === page.mainFrame()) done()
    }
    page.on('framenavigated', navigated)
    page.once('close', gone)
    page.once('crash', gone)
    const timer = setTimeout(gone, maxMs)
    cdp.send('Page.captureScreenshot', { format: 'jpeg', quality }).then((shot) => done(shot.data), gone) // a detached session or closed page: no picture
  })
}
