// Perception redaction: Playwright's ariaSnapshot prints password values in clear, and
// folds them into label names; perceive must mask every rendering.
import t from 'tap'
import { NodeClient } from '../../api-server/sessions/node-client.ts'
import { MASK, redact } from '../../browser-pod/perception.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { newToken } from './harness.ts'

t.test('redact (pure)', async (t) => {
  t.equal(redact('- textbox "Password": S3cret', ['S3cret'], true), `- textbox "Password": ${MASK}`)
  t.equal(redact('- textbox "Password": "-x: y"', ['-x: y'], true), `- textbox "Password": ${MASK}`, 'YAML-quoted value')
  t.equal(redact('- textbox "P": a b c', ['a  b\tc'], true), `- textbox "P": ${MASK}`, 'whitespace-normalised value')
  t.equal(redact('- checkbox "remember LongSecret"', ['LongSecret'], true), `- checkbox "remember ${MASK}"`, 'inside a name')
  t.equal(redact('- textbox "P": ab\n- text: ab', ['ab'], true), `- textbox "P": ${MASK}\n- text: ab`, 'short values: only as a textbox value')
  t.equal(redact('- textbox "P": q"uote\\d', ['q"uote\\d'], true), `- textbox "P": ${MASK}`)
  t.equal(redact('- checkbox "x q\\"uote\\\\d"', ['q"uote\\d'], true), `- checkbox "x ${MASK}"`, 'escaped inside a quoted name')
  t.equal(redact('nothing to see', [], true), 'nothing to see')
  t.equal(redact('echo: LongSecret!', ['LongSecret'], false), `echo: ${MASK}!`, 'visible text too')
})

t.test('perceive masks tricky password values (real Chromium)', async (t) => {
  const token = newToken()
  const pod = await startPod({ token })
  t.teardown(() => pod.close())
  const c = new NodeClient(pod.endpoint, token)
  t.teardown(() => c.close())
  await c.configure({ sessionId: 'nsess_perc', egress: { mode: 'platform', declaredHosts: [] } })
  const html = `<title>p</title>
    <label>Password <input type=password id=a></label>
    <label><input type=checkbox> keep <input type=password id=b aria-label=again></label>
    <div id=host></div>
    <iframe srcdoc="<input type=password id=c aria-label=inner>"></iframe>
    <input id=d aria-label=masked style="-webkit-text-security: disc">
    <textarea id=e aria-label=notes style="-webkit-text-security: square"></textarea>
    <script>document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<input type=password aria-label=shadow>'</script>`
  await c.drive('navigate', { url: 'data:text/html,' + encodeURIComponent(html) })
  const values = { a: '-lead: "quoted" \\ sec', b: 'Label Folded Secret', c: 'FrameSecret99', shadow: 'ShadowSecret42', d: 'MaskedText77', e: 'MaskedNotes88' }
  await c.drive('act', { verb: 'type', selector: '#a', text: values.a })
  await c.drive('act', { verb: 'type', selector: '#b', text: values.b })
  await c.drive('act', { verb: 'type', selector: 'iframe >> internal:control=enter-frame >> #c', text: values.c })
  await c.drive('act', { verb: 'type', selector: '#host input', text: values.shadow })
  await c.drive('act', { verb: 'type', selector: '#d', text: values.d })
  await c.drive('act', { verb: 'type', selector: '#e', text: values.e })
  const p = await c.drive('perceive', {})
  const all = p.snapshot + '\n' + p.text
  for (const [k, v] of Object.entries(values)) {
    const n = v.replace(/\s+/g, ' ').trim()
    t.ok(!all.includes(v) && !all.includes(n) && !all.includes(JSON.stringify(n).slice(1, -1)), `${k} is masked`)
  }
  t.match(p.snapshot, /- textbox "Password" \[ref=\w+\]: ••••••••/)
  t.match(p.snapshot, /- textbox "masked" \[ref=\w+\]: ••••••••/, 'a text field that renders masked is redacted like a password')
  t.match(p.snapshot, /- textbox "notes" \[ref=\w+\]: ••••••••/)
})
