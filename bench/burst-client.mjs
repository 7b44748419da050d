// The burst's clients, in a worker thread: agents are other processes, so the api-server's
// event loop should serve the burst, not also run twenty fetches and parse their answers.
// Receives { url, apiKey, n } and answers with each start's status, time and session id.
// Plain JavaScript: a worker thread does not inherit the tsx loader.
import { parentPort } from 'node:worker_threads'

async function start(url, apiKey) {
  const t0 = performance.now()
  const res = await fetch(url + '/v1/sessions', { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{}' })
  const body = await res.json()
  return { status: res.status, ms: performance.now() - t0, id: body.id }
}

parentPort.on('message', async ({ url, apiKey, n }) => {
  parentPort.postMessage(await Promise.all(Array.from({ length: n }, () => start(url, apiKey))))
})
