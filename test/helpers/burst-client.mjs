// A burst of requests sent from a worker thread: agents are other processes, so the server
// under test (in this process) should spend its event loop serving the burst, not also
// running the clients' fetches and parsing their answers — the measured latency is then
// the service's. Used by the capacity test and the burst benchmark (bench/burst.ts).
// Plain JavaScript: a worker thread does not inherit the tsx loader.
//
// Message in: { url, apiKey, n, method, path, body }. Message out: n results, each
// { status, ms, retryAfter, body } in the order they were sent.
import { request } from 'node:http'
import { parentPort } from 'node:worker_threads'

// node:http, not fetch: the clients share the machine's cores with the server under test,
// and fetch (undici, WHATWG streams) cost about twice the CPU per request (measured). A connection
// per request (agent: false): twenty agents, not one client's pool
function one({ url, apiKey, method, path, body }) {
  const payload = JSON.stringify(body)
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method, agent: false, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const ms = performance.now() - t0
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = text
        }
        resolve({ status: res.statusCode, ms, retryAfter: res.headers['retry-after'] ?? null, location: res.headers.location ?? null, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

parentPort.on('message', async (m) => {
  parentPort.postMessage(await Promise.all(Array.from({ length: m.n }, () => one(m))))
})
