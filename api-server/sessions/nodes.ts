// Reaching a live session's browser pod: the node directory gives endpoint and
// token; one keep-alive NodeClient per session is kept until the session ends.
import { NodeClient } from './node-client.ts'
import type { NodeDirectory } from '../../ports/ports.ts'
import { errors } from '../../contracts/errors.ts'

export class NodeClients {
  readonly #clients = new Map<string, NodeClient>()
  private readonly directory: NodeDirectory
  constructor(directory: NodeDirectory) {
    this.directory = directory
  }

  async get(sessionId: string): Promise<NodeClient> {
    const cached = this.#clients.get(sessionId)
    if (cached) return cached
    const access = await this.directory.lookup(sessionId)
    if (!access) throw errors.sessionNotLive('not live')
    const client = new NodeClient(access.endpoint, access.token)
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
