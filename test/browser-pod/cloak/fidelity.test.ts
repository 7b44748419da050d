// The cloak profile against the usual bot-detection signals (test/fixtures/pages/
// fidelity.html): a cloak session passes more of them than stock headless Chromium,
// measured in the same run on the same page — and at least the two loudest tells are gone.
import t from 'tap'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { APP, cloakWorld } from './helpers.ts'
import { shown } from '../../helpers/perceived.ts'

interface Fidelity {
  passed: number
  total: number
  signals: Record<string, { pass: boolean | 'n/a'; value: unknown }>
}

t.test('fidelity signals: cloak vs stock headless', async (t) => {
  const w = await cloakWorld(t)
  await w.enableCloak()
  const url = `${APP}/fidelity.html`

  const viaSession = async (body: Record<string, unknown>): Promise<Fidelity> => {
    const id = await w.open(body)
    await w.req('POST', `/v1/sessions/${id}/navigate`, { url })
    await w.req('POST', `/v1/sessions/${id}/wait-for`, { text: 'fidelity check done' })
    const text = shown((await w.req('POST', `/v1/sessions/${id}/perceive`, {})).body)
    await w.end(id)
    // page text stands quoted and escaped in the snapshot (\" and \\): read it back unescaped
    const plain = text.replace(/\\(["\\])/g, '$1')
    return JSON.parse(/\{"passed".*\}/.exec(plain)![0])
  }
  const cloak = await viaSession({ browserKind: 'cloak', url: `${APP}/` })
  const headlessSession = await viaSession({})
  // stock: Playwright's headless Chromium with default options, straight at the server
  const browser = await launchTestBrowser(t)
  const page = await browser.newPage()
  await page.goto(`http://${w.web.ip}/fidelity.html`)
  await page.waitForFunction(() => document.title === 'fidelity: done')
  const stock = (await page.evaluate(() => (window as any).__fidelity)) as Fidelity

  const failing = (f: Fidelity) => Object.entries(f.signals).filter(([, s]) => s.pass === false).map(([k]) => k).join(', ')
  t.comment(`cloak ${cloak.passed}/${cloak.total} (failing: ${failing(cloak)})`)
  t.comment(`chromium session ${headlessSession.passed}/${headlessSession.total} (failing: ${failing(headlessSession)})`)
  t.comment(`stock headless ${stock.passed}/${stock.total} (failing: ${failing(stock)})`)

  t.test('the cloak pod passes more fidelity signals than stock headless', async (t) => {
    t.equal(cloak.total, stock.total, 'the same signals were judged')
    t.ok(cloak.passed > stock.passed, `${cloak.passed} > ${stock.passed}`)
    t.ok(cloak.passed > headlessSession.passed, 'and more than a headless session of this service')
  })

  t.test('no automation tells: navigator.webdriver false, no HeadlessChrome, a real window', async (t) => {
    for (const name of ['webdriver', 'ua_not_headless', 'app_version_not_headless', 'outer_dimensions', 'screen_not_viewport', 'permissions_consistent', 'languages', 'timezone', 'visible']) {
      t.equal(cloak.signals[name]?.pass, true, `${name}: ${JSON.stringify(cloak.signals[name]?.value)}`)
    }
    t.equal(stock.signals.webdriver.pass, false, 'stock headless shows navigator.webdriver')
    t.equal(stock.signals.ua_not_headless.pass, false, 'stock headless says HeadlessChrome')
  })
})
