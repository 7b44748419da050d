// Who the client is. By default the TCP peer: X-Forwarded-For is a header any client can
// write. Behind reverse proxies listed in NIGHTJAR_TRUSTED_PROXIES, the address those
// proxies report is believed — hop by hop from the peer, and only while each hop is a
// trusted proxy (proxy-addr, the same rules Fastify's trustProxy and Express use). Every
// per-address limit, HTTP routes and WebSocket upgrades alike, keys on this address.
import type { IncomingMessage } from 'node:http'
import proxyaddr from 'proxy-addr'

export type TrustFunction = (addr: string, hop: number) => boolean

/** A trust test from a list of addresses and CIDR ranges; throws on a malformed entry. */
export function trustFunction(proxies: readonly string[]): TrustFunction {
  if (!proxies.length) return () => false
  return proxyaddr.compile([...proxies])
}

/** The client address of a request (an upgrade's too), through the trusted proxies only. */
export function clientAddress(req: IncomingMessage, trust: TrustFunction): string {
  return proxyaddr(req, trust)
}
