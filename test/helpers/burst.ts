// Sends n identical requests at once from a worker thread (burst-client.mjs says why).
import { Worker } from 'node:worker_threads'

export interface BurstResult {
  status: number
  /** from the moment the worker sent it to the whole answer read */
  ms: number
  retryAfter: string | null
  /** the Location header (a 202 pending start names the session to poll) */
  location: string | null
  body: any
}

export class BurstClient {
  readonly #worker = new Worker(new URL('./burst-client.mjs', import.meta.url))

  private readonly target: { url: string; apiKey: string }
  constructor(target: { url: string; apiKey: string }) {
    this.target = target
  }

  send(n: number, method: string, path: string, body: unknown = {}): Promise<BurstResult[]> {
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => reject(err)
      this.#worker.once('error', fail)
      this.#worker.once('message', (results: BurstResult[]) => {
        this.#worker.off('error', fail)
        resolve(results)
      })
      this.#worker.postMessage({ ...this.target, n, method, path, body })
    })
  }

  close(): Promise<number> {
    return this.#worker.terminate()
  }
}
