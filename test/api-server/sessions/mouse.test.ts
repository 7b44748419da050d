// Mouse and forms: drag, mouse_click / mouse_move / mouse_wheel at viewport
// coordinates and fill_form, through the real MCP SDK client and REST, against real
// Chromium and the "public web" namespace. What the page observed is read back with
// perceive: the fixture pages (test/fixtures/pages/mouse-*.html) write every event they
// see into their text.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { waitFor } from '../../helpers/wait.ts'
import { mouseContracts } from '../../../contracts/operations/drive-mouse.ts'
import { shown } from '../../helpers/perceived.ts'

t.test('mouse and forms', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const page = (p: string) => `http://example.com/${p}`
  const rest = async (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await rest(method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.body
  }
  const textOf = async (id: string) => shown(await ok('POST', `/v1/sessions/${id}/perceive`, {}))

  t.test('the five tools are listed with their annotations and schemas', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const tools = (await mcp.listTools()).tools
    for (const c of mouseContracts) {
      const tool = tools.find((x) => x.name === c.name)
      t.ok(tool, `${c.name} is listed`)
      t.same(tool?.annotations, c.annotations, `${c.name}: annotations`)
      t.equal(tool?.inputSchema.type, 'object', `${c.name}: an input schema`)
      t.ok(tool?.outputSchema, `${c.name}: an output schema`)
      t.match(tool?.description, /scope: sessions:drive/)
    }
  })

  t.test('over MCP: drag one element onto another, click, move and wheel at coordinates', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await mcp.callTool({ name, arguments: args })
      if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
      return r.structuredContent as any
    }
    const id = (await call('session_start', {})).id as string
    const text = async () => shown(await call('perceive', { sessionId: id }))

    await t.test('drag: the page sees the card dropped on the bin', async (t) => {
      await call('navigate', { sessionId: id, url: page('mouse-drag.html') })
      t.match(await text(), /nothing dropped/)
      const dragged = await call('drag', { sessionId: id, from: '#card', to: '#bin' })
      t.has(dragged, { ok: true, url: page('mouse-drag.html') })
      t.match(await text(), /dropped card on bin/, 'the drop event reached the target with the dragged data')
    })

    await t.test('mouse_click: a click on a canvas lands on the point asked for', async (t) => {
      await call('navigate', { sessionId: id, url: page('mouse-canvas.html') })
      t.has(await call('mouse_click', { sessionId: id, x: 120, y: 80 }), { ok: true, url: page('mouse-canvas.html') })
      t.match(await text(), /clicked at 120,80/)
      await call('mouse_click', { sessionId: id, x: 300, y: 250 })
      t.match(await text(), /clicked at 120,80 300,250/, 'a second click where asked')
      await call('mouse_click', { sessionId: id, x: 50, y: 60, button: 'right' })
      t.match(await text(), /button 2 detail 1/, 'the right button')
      await call('mouse_click', { sessionId: id, x: 70, y: 90, clickCount: 2 })
      const after = await text()
      t.match(after, /double-clicked at 70,90/, 'clickCount 2 is a double click')
      t.match(after, /button 0 detail 2/)
    })

    await t.test('mouse_move and mouse_wheel: the page sees the pointer and the wheel', async (t) => {
      await call('mouse_move', { sessionId: id, x: 225, y: 125, steps: 5 })
      const moved = await text()
      t.match(moved, /moved to 225,125/)
      t.match(moved, /\bhot\b/, 'the pointer is over the square drawn at 200..250, 100..150')
      await call('mouse_move', { sessionId: id, x: 10, y: 10 })
      t.match(await text(), /cold/)
      t.has(await call('mouse_wheel', { sessionId: id, deltaY: 300 }), { ok: true, url: page('mouse-canvas.html') })
      // the wheel's scroll is asynchronous in the page: poll what it shows
      await waitFor(async () => /wheel 0,300/.test(await text()), { what: 'the wheel event' })
      await call('mouse_wheel', { sessionId: id, deltaX: 40, deltaY: -100 })
      await waitFor(async () => /wheel 40,200/.test(await text()), { what: 'the second wheel event' })
      t.pass('both wheel turns reached the page with their deltas')
    })

    await t.test('a point outside the viewport, or no delta, is refused', async (t) => {
      const r = await mcp.callTool({ name: 'mouse_click', arguments: { sessionId: id, x: 1280, y: 10 } })
      t.equal(r.isError, true)
      t.equal((r.structuredContent as any).status, 400)
      t.equal((r.structuredContent as any).error.reason, 'outside_viewport')
      t.equal((r.structuredContent as any).error.message, 'point (1280, 10) is outside the 1280x720 viewport')
    })

    await call('session_end', { sessionId: id })
  })

  t.test('over REST: fill_form fills text, checkbox, radio and select in one call; the journal keeps no value', async (t) => {
    const id = (await ok('POST', '/v1/sessions', {})).id as string
    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('mouse-form.html') })
    const VALUE = 'Ada Lovelace-private-words'
    const filled = await rest('POST', `/v1/sessions/${id}/fill-form`, {
      fields: [
        { selector: '#name', value: VALUE },
        { selector: '#email', value: 'ada@example.com' },
        { selector: '#notes', value: 'two\nlines' },
        { selector: '#gift', value: true },
        { selector: '#news', value: false },
        { selector: '#ship-exp', value: true },
        { selector: '#size', value: 'l' },
        { selector: '#toppings', value: ['cheese', 'basil'] },
      ],
    })
    t.equal(filled.status, 200)
    // what changed on the page comes with the answer: each field, with its ref
    t.match(filled.body.changes, /~ checkbox "Gift wrap" \[checked\] \[ref=\w+\]/, 'the answer says what the fill changed')
    const { changes: _changes, ...answer } = filled.body
    t.same(answer, {
      ok: true,
      url: page('mouse-form.html'),
      fields: [
        { selector: '#name', kind: 'text' },
        { selector: '#email', kind: 'text' },
        { selector: '#notes', kind: 'text' },
        { selector: '#gift', kind: 'checkbox' },
        { selector: '#news', kind: 'checkbox' },
        { selector: '#ship-exp', kind: 'radio' },
        { selector: '#size', kind: 'select' },
        { selector: '#toppings', kind: 'select' },
      ],
    })
    await ok('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#send' })
    const sent = await textOf(id)
    t.match(sent, `sent name=${VALUE} email=ada@example.com notes=two`, 'the form submitted the typed text')
    t.match(sent, /gift=on ship=express size=l toppings=cheese toppings=basil/, 'checkbox, radio and selects as filled')
    t.notMatch(sent, /news=on/, 'the checkbox set to false was unchecked')

    const journal = await ok('GET', `/v1/sessions/${id}/journal`)
    const row = journal.items.find((e: any) => e.op === 'fill_form')
    t.same(row.detail, { selectors: ['#name', '#email', '#notes', '#gift', '#news', '#ship-exp', '#size', '#toppings'], count: 8 }, 'selectors and the count')
    t.notOk(JSON.stringify(journal).includes('private-words'), 'no typed value in the journal')
    t.notOk(JSON.stringify(journal).includes('ada@example.com'), 'no typed value in the journal')
    await rest('DELETE', `/v1/sessions/${id}`)
  })

  t.test('over REST: a fill_form with a wrong field fills nothing; drag and coordinates too', async (t) => {
    const id = (await ok('POST', '/v1/sessions', {})).id as string
    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('mouse-form.html') })
    const mismatch = await rest('POST', `/v1/sessions/${id}/fill-form`, { fields: [{ selector: '#name', value: 'Grace' }, { selector: '#gift', value: 'yes' }] })
    t.equal(mismatch.status, 400)
    t.same(mismatch.body.error, { code: 'bad_request', reason: 'field_value_mismatch', message: 'fields[1]: a checkbox takes true or false' })
    const unsupported = await rest('POST', `/v1/sessions/${id}/fill-form`, { fields: [{ selector: '#name', value: 'Grace' }, { selector: '#file', value: 'x' }] })
    t.equal(unsupported.status, 400)
    t.equal(unsupported.body.error.reason, 'unsupported_field')
    t.match(unsupported.body.error.message, /^fields\[1\]: a file input cannot be filled/)
    const radio = await rest('POST', `/v1/sessions/${id}/fill-form`, { fields: [{ selector: '#ship-exp', value: false }] })
    t.equal(radio.body.error.reason, 'field_value_mismatch', 'a radio is not unchecked')
    const ambiguous = await rest('POST', `/v1/sessions/${id}/fill-form`, { fields: [{ selector: '#name', value: 'Grace' }, { selector: '#name, #email', value: 'x' }] })
    t.equal(ambiguous.status, 400)
    t.equal(ambiguous.body.error.reason, 'ambiguous_selector', 'a selector matching several fields is refused, never guessed')
    const tooMany = await rest('POST', `/v1/sessions/${id}/fill-form`, { fields: Array.from({ length: 51 }, () => ({ selector: '#name', value: 'x' })) })
    t.equal(tooMany.status, 400, 'at most 50 fields')
    await ok('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#send' })
    t.match(await textOf(id), 'sent name= email= notes= news=on ship=standard size=s', 'no field of a refused fill_form was filled')

    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('mouse-drag.html') })
    const dropped = await rest('POST', `/v1/sessions/${id}/drag`, { from: '#card', to: '#elsewhere' })
    t.equal(dropped.status, 200)
    t.match(await textOf(id), /dropped card on elsewhere/)
    const two = await rest('POST', `/v1/sessions/${id}/drag`, { from: '#card', to: '.box' })
    t.equal(two.status, 400)
    t.equal(two.body.error.reason, 'ambiguous_selector', 'a drop target matching several elements is refused, never guessed')

    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('mouse-canvas.html') })
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-click`, { x: 5, y: 720 })).body.error?.reason, 'outside_viewport')
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-click`, { x: -1, y: 5 })).status, 400, 'negative coordinates are not valid input')
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-wheel`, {})).status, 400, 'mouse_wheel needs a delta')
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-move`, { x: 399, y: 299 })).status, 200)
    t.match(await textOf(id), /moved to 399,299/)
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-click`, { x: 33, y: 44, button: 'middle' })).status, 200)
    t.match(await textOf(id), /button 1 detail 1/, 'the middle button')
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-wheel`, { deltaY: 120 })).status, 200)
    await waitFor(async () => /wheel 0,120/.test(await textOf(id)), { what: 'the wheel over REST' })
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-wheel`, { x: 500, y: 100, deltaY: 150 })).status, 200)
    await waitFor(async () => /pane at 150/.test(await textOf(id)), { what: 'the pane scrolled by the wheel over it' })
    t.match(await textOf(id), /wheel 0,270/, 'the wheel at a point: the pane under it scrolled, the page saw the event')
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-wheel`, { x: 500, deltaY: 10 })).status, 400, 'x without y')
    t.equal((await rest('POST', `/v1/sessions/${id}/mouse-wheel`, { x: 1300, y: 10, deltaY: 10 })).body.error?.reason, 'outside_viewport')

    const journal = await ok('GET', `/v1/sessions/${id}/journal`)
    const ops = journal.items.map((e: any) => [e.op, e.detail])
    t.ok(ops.some(([op, d]: any) => op === 'drag' && d.from === '#card' && d.to === '#elsewhere'), 'drag is journalled with its selectors')
    t.ok(ops.some(([op, d]: any) => op === 'mouse_click' && d.x === 33 && d.y === 44 && d.button === 'middle'), 'mouse_click with its coordinates')
    t.ok(ops.some(([op, d]: any) => op === 'mouse_move' && d.x === 399 && d.y === 299), 'mouse_move with its coordinates')
    t.ok(ops.some(([op, d]: any) => op === 'mouse_wheel' && d.deltaY === 120), 'mouse_wheel with its deltas')
    t.ok(ops.some(([op, d]: any) => op === 'mouse_wheel' && d.x === 500 && d.y === 100 && d.deltaY === 150), 'and its point')
    t.notOk(JSON.stringify(journal).includes('Grace'), 'a refused fill_form left no value in the journal')
    await rest('DELETE', `/v1/sessions/${id}`)
  })
})
