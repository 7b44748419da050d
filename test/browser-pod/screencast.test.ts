// The live view at the pod, in real Chromium: the pod's /v1/live WebSocket
// streams a screencast only while a viewer is connected, and nothing while a credential
// fill runs. The pod runs in-process, so the test reads the live view's own counters.
import t from 'tap'
import { WebSocket } from 'ws'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { liveView } from '../../browser-pod/screencast.ts'
import { POD_LIVE_PATH } from '../../contracts/operations/live-view.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { waitFor } from '../helpers/wait.ts'
import { newToken, publicAliases, inProcessSandbox } from './harness.ts'
import { shown } from '../helpers/perceived.ts'

const CANARY = 'Live-Canary-S3cret-41c7'

interface Seen { type: string; jpeg?: string; url?: string }

function viewer(t: { teardown(fn: () => unknown): void }, endpoint: string, token?: string) {
  const seen: Seen[] = []
  const ws = new WebSocket(endpoint.replace(/^http/, 'ws') + POD_LIVE_PATH, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  ws.on('message', (d) => seen.push(JSON.parse(d.toString())))
  t.teardown(() => ws.terminate())
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)))
    ws.once('error', reject)
  })
  const frames = () => seen.filter((m) => m.type === 'frame').length
  return { ws, seen, opened, frames }
}

t.test('the live view at the pod', async (t) => {
  const web = await startPublicWeb(t)
  const logs: string[] = []
  const token = newToken()
  const pod = await startPod({ token, hostAliases: publicAliases(web.ip), log: (l) => logs.push(l), sandbox: inProcessSandbox() })
  t.teardown(() => pod.close())
  const client = new PodClient(pod.endpoint, token)
  t.teardown(() => client.close())
  await client.configure({ sessionId: 'nsess_live', egress: { mode: 'platform', declaredHosts: [] } })
  await client.drive('navigate', { url: 'http://example.com/live-fill.html?delay=100000' })
  const view = liveView(pod.session)

  t.test('the upgrade needs the pod token', async (t) => {
    const v = viewer(t, pod.endpoint, 'not-the-token')
    await t.rejects(v.opened, /refused 401/)
  })

  t.test('frames are painted only while a viewer is connected', async (t) => {
    t.equal(view.streaming, false, 'no screencast before anyone watches')
    t.equal(view.counts.painted, 0, 'Chromium painted nothing for it')
    // the page animates all the time: a screenshot (which renders) does not start the screencast
    await client.drive('screenshot', {})
    t.equal(view.counts.painted, 0)

    const v = viewer(t, pod.endpoint, token)
    await v.opened
    await waitFor(() => v.frames() >= 3, { what: 'frames of the animated page' })
    t.ok(view.streaming, 'streaming while watched')
    const page = v.seen.find((m) => m.type === 'page')
    t.equal(page?.url, 'http://example.com/live-fill.html?delay=100000', 'the page’s URL')
    const jpeg = Buffer.from(v.seen.find((m) => m.type === 'frame')!.jpeg!, 'base64')
    t.same([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG')

    v.ws.close()
    await waitFor(() => !view.streaming && view.viewers === 0, { what: 'the screencast to stop' })
    const painted = view.counts.painted
    await client.drive('screenshot', {})
    await client.drive('perceive', {})
    t.equal(view.counts.painted, painted, 'nothing painted for the view once nobody watches')
  })

  t.test('no frame is streamed while a credential fill runs, and input waits too', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/live-fill.html?delay=900' })
    const v = viewer(t, pod.endpoint, token)
    await v.opened
    await waitFor(() => v.frames() >= 3, { what: 'frames before the fill' })
    const value = Buffer.from(CANARY)
    // the field comes 900 ms after the load: the fill waits for it while the page keeps painting
    const filled = client.secureType({ selector: '#late-pw', value, allowlist: ['example.com'], timeoutMs: 10_000 })
    await waitFor(() => v.seen.some((m) => m.type === 'paused'), { what: 'the view to pause' })
    // a person's key during the fill never reaches the page
    v.ws.send(JSON.stringify({ type: 'key', event: 'keyDown', key: 'x', text: 'x', keyCode: 88 }))
    const r = await filled
    value.fill(0)
    t.same(r, { ok: true, fieldKind: 'password', host: 'example.com' })
    await waitFor(() => v.seen.some((m) => m.type === 'resumed'), { what: 'the view to resume' })
    const paused = v.seen.findIndex((m) => m.type === 'paused')
    const resumed = v.seen.findIndex((m) => m.type === 'resumed')
    t.ok(v.seen.slice(0, paused).filter((m) => m.type === 'frame').length >= 3, 'frames flowed before the fill')
    t.same(v.seen.slice(paused, resumed).filter((m) => m.type === 'frame'), [], 'not one frame while the fill ran')
    const after = v.frames()
    await waitFor(() => v.frames() > after, { what: 'frames after the fill' })
    t.notOk(JSON.stringify(v.seen).includes(CANARY), 'no message carries the secret in clear')
    t.ok(await pod.session.page.locator('#late-pw').evaluate((el, c) => (el as HTMLInputElement).value === c, CANARY), 'the fill typed the secret')
    t.equal(await pod.session.page.locator('#typed').textContent(), '', 'the key sent during the fill reached nothing')
    t.notOk(logs.join('\n').includes(CANARY), 'never logged')
  })

  t.test('a person’s mouse and keys reach the page', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/live-fill.html?delay=100000' })
    const v = viewer(t, pod.endpoint, token)
    await v.opened
    await waitFor(() => v.frames() >= 1, { what: 'a first frame' })
    const box = (await pod.session.page.locator('#name').boundingBox())!
    const at = { x: Math.round(box.x + 20), y: Math.round(box.y + box.height / 2) }
    v.ws.send(JSON.stringify({ type: 'mouse', event: 'mousePressed', ...at, button: 'left', clickCount: 1 }))
    v.ws.send(JSON.stringify({ type: 'mouse', event: 'mouseReleased', ...at, button: 'left', clickCount: 1 }))
    for (const ch of 'hi!') {
      v.ws.send(JSON.stringify({ type: 'key', event: 'keyDown', key: ch, text: ch }))
      v.ws.send(JSON.stringify({ type: 'key', event: 'keyUp', key: ch }))
    }
    // not an input: dropped, never a crash
    v.ws.send('{"type":"mouse","event":"mousePressed","x":-1,"y":5}')
    v.ws.send('not json')
    await waitFor(async () => shown(await client.drive('perceive', {})).includes('typed:hi!'), { what: 'the typed text in the page' })
    t.pass('clicked into the field and typed')
  })
})
