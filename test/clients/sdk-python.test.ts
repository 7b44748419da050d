// The Python SDK (sdk/python) as a user runs it: the machine's python3, the package copied
// outside the repository, against a running server; and its webhook verification against
// signatures made by the standardwebhooks npm library, the reference a sender uses.
import t from 'tap'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { run } from '../helpers/process.ts'
import { startTestServer } from '../helpers/server.ts'
import { renderPython } from '../../scripts/gen-sdk-python.ts'

const PACKAGE = new URL('../../sdk/python/nightjar_sdk/', import.meta.url)

/** The package copied to a folder of its own, as pip would put it on the path. */
function installed(t: { teardown(fn: () => unknown): void }): string {
  const site = mkdtempSync(join(tmpdir(), 'nightjar-sdk-python-'))
  t.teardown(() => rmSync(site, { recursive: true, force: true }))
  cpSync(PACKAGE, join(site, 'nightjar_sdk'), { recursive: true })
  return site
}

const python = (site: string, script: string, input: unknown, env: Record<string, string> = {}) =>
  run('python3', ['-c', script], { cwd: site, env: { ...process.env, PYTHONPATH: site, PYTHONDONTWRITEBYTECODE: '1', ...env }, input: JSON.stringify(input) })

t.test('the generated Python SDK matches the contracts', async (t) => {
  t.equal(readFileSync(new URL('_generated.py', PACKAGE), 'utf8'), renderPython(), 'run node --import tsx scripts/gen-sdk-python.ts')
})

const VERIFY = `
import json, sys
from nightjar_sdk import verify_webhook, WebhookVerificationError
out = []
for case in json.load(sys.stdin):
    try:
        out.append({"ok": verify_webhook(case["secret"], case["headers"], case["body"].encode())})
    except WebhookVerificationError as e:
        out.append({"error": str(e)})
print(json.dumps(out))
`

t.test('[ISSUE-50] verify_webhook accepts any one matching signature of several (a rotation) and refuses the rest', async (t) => {
  const site = installed(t)
  const oldSecret = `whsec_${randomBytes(24).toString('base64')}`
  const newSecret = `whsec_${randomBytes(24).toString('base64')}`
  const body = JSON.stringify({ type: 'session.ended', data: { sessionId: 'nsess_x' } })
  const headers = (id: string, at: Date, payload: string, secrets: string[]) => ({
    'Webhook-Id': id,
    'Webhook-Timestamp': String(Math.floor(at.getTime() / 1000)),
    'Webhook-Signature': secrets.map((s) => new Webhook(s).sign(id, at, payload)).join(' '),
  })
  const now = new Date()
  const stale = new Date(now.getTime() - 6 * 60_000)
  const cases = [
    { secret: newSecret, headers: headers('msg_1', now, body, [oldSecret, newSecret]), body },
    { secret: oldSecret, headers: headers('msg_2', now, body, [oldSecret, newSecret]), body },
    { secret: newSecret, headers: headers('msg_3', now, body, [newSecret]), body },
    { secret: `whsec_${randomBytes(24).toString('base64')}`, headers: headers('msg_4', now, body, [oldSecret, newSecret]), body },
    { secret: newSecret, headers: headers('msg_5', stale, body, [newSecret]), body },
    { secret: newSecret, headers: headers('msg_6', now, body, [newSecret]), body: body.replace('nsess_x', 'nsess_y') },
    { secret: newSecret, headers: { 'webhook-id': 'msg_7', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)) }, body },
  ]
  const run = await python(site, VERIFY, cases)
  t.equal(run.code, 0, run.stderr)
  const results = JSON.parse(run.stdout) as Array<{ ok?: unknown; error?: string }>
  const payload = JSON.parse(body)
  t.same(results[0], { ok: payload }, 'the new secret verifies a header carrying both')
  t.same(results[1], { ok: payload }, 'the old secret verifies it too (a receiver a minute behind)')
  t.same(results[2], { ok: payload }, 'one signature alone verifies')
  t.same(results[3], { error: 'no signature matches the secret' }, 'another secret does not')
  t.same(results[4], { error: 'webhook-timestamp is too old' }, 'a delivery signed six minutes ago is refused')
  t.same(results[5], { error: 'no signature matches the secret' }, 'a changed body is refused')
  t.same(results[6], { error: 'missing webhook-id, webhook-timestamp or webhook-signature' }, 'an unsigned delivery is refused')
})

const DRIVE = `
import json, os, re, sys
from nightjar_sdk import Nightjar, NightjarError
nj = Nightjar(os.environ["NIGHTJAR_URL"], os.environ["NIGHTJAR_KEY"])
out = {"me": sorted(nj.me.get().keys())}
persona = nj.identities.create(name="py-persona")
out["persona_listed"] = any(i["id"] == persona["id"] for i in nj.identities.list())
nj.identities.delete(persona["id"])
s = nj.sessions.create(video={"format": "webm", "fps": 5, "width": 320})
if s["status"] == "pending":  # a loaded machine: the start goes on, and get waits for it
    s = nj.sessions.get(s["id"], wait_seconds=60)
out["status"] = s["status"]
nav = nj.sessions.navigate(s["id"], json.load(sys.stdin))
out["title"] = nav["title"]
page = nj.sessions.perceive(s["id"])
ref = re.search(r'button "Go" \\[ref=(\\w+)\\]', page["snapshot"]).group(1)
out["act"] = sorted(nj.sessions.act(s["id"], verb="click", ref=ref).keys())
out["after"] = nj.sessions.perceive(s["id"])["title"]
out["query"] = "Go" in nj.sessions.perceive(s["id"], query="Go")["snapshot"]
out["screenshot"] = sorted(nj.sessions.screenshot(s["id"]).keys())
out["ended"] = nj.sessions.end(s["id"])["status"]
video = nj.session_video(s["id"])
part = nj.session_video(s["id"], start=0, end=99)
tail = nj.session_video(s["id"], suffix=10)
out["video"] = {"status": video.status, "type": video.content_type, "whole": video.size == len(video.data), "ebml": video.data[:4].hex()}
out["part"] = {"status": part.status, "length": len(part.data), "size": part.size == video.size, "same": part.data == video.data[:100], "tail": tail.data == video.data[-10:]}
try:
    nj.session_video(s["id"], start=video.size + 10)
except NightjarError as e:
    out["past_end"] = {"status": e.status, "code": e.code}
try:
    nj.sessions.get("nsess_0000000000000000000000")
except NightjarError as e:
    out["error"] = {"status": e.status, "code": e.code, "message": e.message}
print(json.dumps(out))
`

t.test('[ISSUE-50] the Python SDK drives a session of a running server', async (t) => {
  const site = installed(t)
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const page = 'data:text/html,<title>py</title><button onclick="document.title=\'clicked\'">Go</button>'
  const run = await python(site, DRIVE, page, { NIGHTJAR_URL: s.url, NIGHTJAR_KEY: acme.apiKey })
  t.equal(run.stderr.includes(acme.apiKey), false, 'no secret on stderr')
  t.equal(run.code, 0, `the script ran to its end ${run.stderr.replaceAll(acme.apiKey, '[key]')}`)
  const out = JSON.parse(run.stdout)
  t.same(out.me, ['agentId', 'orgId', 'principal', 'scopes'], 'me')
  t.equal(out.persona_listed, true, 'identities: create, list, delete')
  t.equal(out.status, 'live', 'sessions.create waits for the session to go live')
  t.equal(out.title, 'py', 'navigate')
  t.ok(out.act.includes('changes'), 'act answers what changed')
  t.equal(out.after, 'clicked', 'the click ran in the page')
  t.equal(out.query, true, 'perceive with query')
  t.ok(out.screenshot.length > 0, 'screenshot')
  t.equal(out.ended, 'ended', 'end')
  t.same(out.video, { status: 200, type: 'video/webm', whole: true, ebml: '1a45dfa3' }, '[ISSUE-51] session_video downloads the ended session’s video (a WebM file)')
  t.same(out.part, { status: 206, length: 100, size: true, same: true, tail: true }, '[ISSUE-51] and its byte ranges, as a player seeks')
  t.same(out.past_end, { status: 416, code: 'range_not_satisfiable' }, '[ISSUE-51] a range past the end raises NightjarError 416')
  t.same(out.error, { status: 404, code: 'not_found', message: 'unknown session' }, 'an error raises NightjarError with the catalogue code')
})
