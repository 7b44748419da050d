// Who is on the other end of a loopback TCP connection: the kernel's socket table
// (/proc/net/tcp, tcp6) names each socket's owning uid. An embedded pod shares the host's
// loopback with every local user, so its egress gateway serves only its own uid (its
// Chromium's); in Kubernetes the pod's network namespace is the boundary instead.
import { readFileSync } from 'node:fs'
import { isIPv4 } from 'node:net'
import type { Socket } from 'node:net'

/** The /proc/net/tcp form of an address and port: little-endian hex words, then the port in hex. */
function procAddress(address: string, port: number): string {
  const p = port.toString(16).toUpperCase().padStart(4, '0')
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address
  if (isIPv4(v4)) {
    const hex = v4.split('.').map((o) => Number(o).toString(16).padStart(2, '0')).reverse().join('').toUpperCase()
    return `${hex}:${p}`
  }
  return '' // IPv6 loopback peers are looked up in tcp6 by port alone (below)
}

/**
 * The uid owning the client end of `socket` (a connection accepted on loopback), or
 * undefined when the table does not show it (gone, or not this machine's).
 */
export function loopbackPeerUid(socket: Socket): number | undefined {
  const { remoteAddress, remotePort, localAddress, localPort } = socket
  if (!remoteAddress || !remotePort || !localAddress || !localPort) return undefined
  const client = procAddress(remoteAddress, remotePort)
  const server = procAddress(localAddress, localPort)
  const table = client ? '/proc/net/tcp' : '/proc/net/tcp6'
  const clientPort = `:${remotePort.toString(16).toUpperCase().padStart(4, '0')}`
  const serverPort = `:${localPort.toString(16).toUpperCase().padStart(4, '0')}`
  let text: string
  try {
    text = readFileSync(table, 'latin1')
  } catch {
    return undefined
  }
  for (const line of text.split('\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
    const c = line.trim().split(/\s+/)
    if (c.length < 8) continue
    const matches = client ? c[1] === client && c[2] === server : c[1].endsWith(clientPort) && c[2].endsWith(serverPort)
    if (matches) return Number(c[7])
  }
  return undefined
}

/** A check for accepted connections: only this process's uid may use the server. */
export function sameUidOnly(uid = process.getuid?.()): ((socket: Socket) => boolean) | undefined {
  if (uid === undefined) return undefined
  return (socket) => loopbackPeerUid(socket) === uid
}
