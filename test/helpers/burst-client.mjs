// A burst of requests sent from a worker thread: agents are other processes, so the server
// under test (in this process) should spend its event loop serving the burst, not also
// running the clients' fetches and parsing their answers — the measured latency is then
// the service's. Used by the capacity test and the burst benchmark (bench/burst.ts).
// Plain JavaScript: a worker thread does not inherit the tsx loader.
//
// Message in: { url, apiKey, n, method, path, body }. Message out: n results, each
// { status, ms, retryAfter, body } in the order they were sent.
import { parentPort } from 'node:worker_threads'

async function one({ url, apiKey, method, path, body }) {
  const t0 = performance.now()
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  const ms = performance.now() - t0
  let parsed
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: res.status, ms, retryAfter: res.headers.get('retry-after'), body: parsed }
}

parentPort.on('message', async (m) => {
  parentPort.postMessage(await Promise.all(Array.from({ length: m.n }, () => one(m))))
})
