// The inspector's timeline as a pure function of the journal and the trail: a call placed
// when it began (the journal writes its row when it ends), each source's entries given their
// kind, a failed request or a call's error marked, long text clipped, ties keeping the call
// first, and a session without a trail shown by its calls alone.
import t from 'tap'
import { sessionTimeline, type JournalRow, type Trail } from '../../../api-server/recordings/trail.ts'

const T0 = Date.parse('2026-12-03T10:00:00.000Z')
const iso = (ms: number) => new Date(T0 + ms).toISOString()

t.test('[ISSUE-51] the timeline: calls where they began, every source with its kind, oldest first', async (t) => {
  const journal: JournalRow[] = [
    { at: iso(0), op: 'session_start', outcome: 'ok', detail: {} },
    { at: iso(3000), op: 'navigate', outcome: 'ok', durationMs: 2500, detail: { url: 'http://example.com/a' } },
    { at: iso(4000), op: 'act', outcome: 'error', errorCode: 'stale_ref', durationMs: 100, detail: { verb: 'click', ref: 'e4' } },
    { at: iso(5000), op: 'human_take_control', outcome: 'ok', detail: { userId: 'nusr_1' } },
  ]
  const trail: Pick<Trail, 'network' | 'console'> = {
    network: [
      { method: 'GET', url: 'http://example.com/a', status: 200, resourceType: 'document', startedAt: T0 + 600, durationMs: 40, failure: null },
      { method: 'GET', url: 'http://example.com/x.png', status: 404, resourceType: 'image', startedAt: T0 + 700, durationMs: 5, failure: null },
      { method: 'GET', url: 'http://example.com/slow', status: null, resourceType: 'fetch', startedAt: T0 + 800, durationMs: null, failure: null },
      { method: 'POST', url: 'http://example.com/gone', status: null, resourceType: 'xhr', startedAt: T0 + 3900, durationMs: 3, failure: 'net::ERR_CONNECTION_REFUSED' },
    ],
    console: [
      { type: 'log', text: 'x'.repeat(1000), time: T0 + 900 },
      { type: 'dialog', text: 'alert in tab_1: hi → accepted', time: T0 + 3900 },
    ],
  }
  const events = sessionTimeline(journal, trail)
  t.same(events.map((e) => `${e.at - T0} ${e.kind} ${e.title}`), [
    '0 call session_start',
    '500 navigation navigate',
    '600 navigation GET http://example.com/a',
    '700 request GET http://example.com/x.png',
    '800 request GET http://example.com/slow',
    '900 console console.log',
    '3900 call act',
    '3900 request POST http://example.com/gone',
    '3900 dialog dialog',
    '5000 person human_take_control',
  ], 'a call is placed when it began; equal times keep the call first')
  const by = (title: string) => events.find((e) => e.title === title)!
  t.equal(by('GET http://example.com/x.png').outcome, 'error', 'a 404 is marked failed')
  t.equal(by('GET http://example.com/x.png').detail, '404 · image')
  t.equal(by('GET http://example.com/slow').outcome, null, 'a request still in flight is neither')
  t.equal(by('GET http://example.com/slow').detail, 'no response yet · fetch')
  t.equal(by('POST http://example.com/gone').detail, 'net::ERR_CONNECTION_REFUSED · xhr')
  t.equal(by('act').outcome, 'error')
  t.equal(by('act').detail, '{"verb":"click","ref":"e4"} · stale_ref', 'a call shows its journalled arguments and its error')
  t.equal(by('session_start').detail, '', 'no arguments, no detail')
  t.equal(by('console.log').detail.length, 400, 'long text is clipped')
  t.ok(by('console.log').detail.endsWith('…'))
})

t.test('[ISSUE-51] a session without a trail: its calls alone', async (t) => {
  const events = sessionTimeline([{ at: iso(10), op: 'navigate', outcome: 'ok', durationMs: 10 }], null)
  t.same(events.map((e) => [e.at - T0, e.kind]), [[0, 'navigation']])
})
