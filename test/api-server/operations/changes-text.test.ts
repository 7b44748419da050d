// How a page-changing tool's answer reads over MCP: the fields a model needs as lines,
// then (after a blank line when there are fields) the changes in perceive's notation, unescaped; the JSON object whole in
// structuredContent (what programs read).
import t from 'tap'
import { changesToMcp } from '../../../api-server/operations/sessions/drive.ts'

t.test('a page-changing answer as text: fields, a blank line, the changes unescaped; JSON in structuredContent', async (t) => {
  const result = { ok: true, verb: 'click', url: 'http://localhost:8080/rows.html', changes: '~ textbox "Your name" [ref=e4]: Ada\n+ paragraph [ref=e6]: Hello Ada' }
  const out = changesToMcp(result)
  t.equal(out.content[0]!.type, 'text')
  t.equal((out.content[0] as { text: string }).text, '~ textbox "Your name" [ref=e4]: Ada\n+ paragraph [ref=e6]: Hello Ada',
    'no echo of ok, the verb or an unchanged url; quotes and newlines as the page says them')
  const navigated = changesToMcp({ url: 'http://x.test/b', title: 'B', status: 200, changes: 'new page: "B" http://x.test/b\n- heading "B" [level=1] [ref=e2]' })
  t.equal((navigated.content[0] as { text: string }).text, 'title: B\nstatus: 200\n\nnew page: "B" http://x.test/b\n- heading "B" [level=1] [ref=e2]', 'the new page names its url')
  t.same(out.structuredContent, result, 'the whole result for programs')
  const quiet = changesToMcp({ ok: true, url: 'http://x.test/', selected: ['green'] })
  t.equal((quiet.content[0] as { text: string }).text, 'url: http://x.test/\nselected: ["green"]', 'changes: false — only the fields')
})
