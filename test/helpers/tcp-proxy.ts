// A round-robin TCP proxy for tests, standing in for a load balancer in front of several
// api-server replicas: each connection goes to the next backend; a backend that refuses is
// skipped (as a Service drops an endpoint that is gone), and when every backend refuses the
// client's connection is closed.
import net from 'node:net'

export interface TcpProxy {
  port: number
  /** backends each accepted connection went to, in order */
  readonly picks: number[]
  setBackends(ports: number[]): void
  close(): Promise<void>
}

export async function startTcpProxy(t: { teardown(fn: () => unknown): void }, backends: number[], host = '0.0.0.0'): Promise<TcpProxy> {
  let list = [...backends]
  let next = 0
  const picks: number[] = []
  const open = new Set<net.Socket>()
  const connectTo = (client: net.Socket, tries: number) => {
    if (tries >= list.length || client.destroyed) return client.destroy()
    const port = list[next++ % list.length]
    const upstream = net.connect(port, '127.0.0.1')
    open.add(upstream)
    upstream.once('connect', () => {
      picks.push(port)
      upstream.removeAllListeners('error')
      upstream.on('error', () => client.destroy())
      client.on('error', () => upstream.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
      upstream.on('close', () => client.destroy())
      client.on('close', () => upstream.destroy())
    })
    upstream.once('error', () => {
      open.delete(upstream)
      connectTo(client, tries + 1)
    })
    upstream.on('close', () => open.delete(upstream))
  }
  const server = net.createServer((client) => {
    open.add(client)
    client.on('close', () => open.delete(client))
    client.on('error', () => client.destroy())
    connectTo(client, 0)
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const close = () => new Promise<void>((resolve) => {
    for (const s of open) s.destroy()
    server.close(() => resolve())
  })
  t.teardown(close)
  return {
    port: (server.address() as net.AddressInfo).port,
    picks,
    setBackends: (ports) => void (list = [...ports]),
    close,
  }
}
