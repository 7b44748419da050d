// Reaching a live session's browser pod: the pod directory gives endpoint and
// token; one keep-alive PodClient per session is kept until the session ends.
import { PodClient } from './pod-client.ts'
import type { PodDirectory } from '../../ports/ports.ts'
import { errors } from '../../contracts/errors.ts'

export class PodClients {
  readonly #clients = new Map<string, PodClient>()
  private readonly directory: PodDirectory
  constructor(directory: PodDirectory) {
    this.directory = directory
  }

  async get(sessionId: string): Promise<PodClient> {
    const cached = this.#clients.get(sessionId)
    if (cached) return cached
    const access = await this.directory.lookup(sessionId)
    if (!access) throw errors.sessionNotLive('not live')
    const client = new PodClient(access.endpoint, access.token)
    this.#clients.set(sessionId, client)
    return client
  }

  drop(sessionId: string): void {
    this.#clients.get(sessionId)?.close()
    this.#clients.delete(sessionId)
  }

  closeAll(): void {
    for (const id of [...this.#clients.keys()]) this.drop(id)
  }
}
