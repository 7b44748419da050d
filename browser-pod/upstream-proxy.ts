// A session's upstream proxy (docs/proxy.md): after the egress gateway judged a direct
// destination, the connection is opened through the proxy (HTTP CONNECT, over TLS for
// https://, or SOCKS5 with username/password). The proxy is always asked for the address
// the gateway checked, never a name, so nothing resolves differently there. One deadline
// bounds the whole dial; a ProxyError's detail says which step failed, for the log only.
import http from 'node:http'
import net from 'node:net'
import tls from 'node:tls'
import { SocksClient } from 'socks'
import type { ProxyScheme } from '../contracts/proxy.ts'

/** What the gateway holds for a proxied session; the credentials only in memory. */
export interface UpstreamProxy {
  scheme: ProxyScheme
  /** lower-case, no IPv6 brackets */
  host: string
  port: number
  username?: string
  password?: string
  /** the platform names this proxy (NIGHTJAR_PLATFORM_PROXIES): it may be internal */
  platformProxy?: boolean
}

/**
 * The proxy could not be used. Whatever the cause — refused by the platform, refused or
 * reset by the proxy's host, TLS, a status other than 200, a SOCKS reply, the deadline —
 * a caller sees one error (proxy_failed): telling them apart would let whoever names a
 * proxy probe what listens where. The detail is for the pod's log.
 */
export class ProxyError extends Error {
  /** value-free: a status line, a SOCKS reply name, an errno code or the platform's refusal */
  readonly detail: string
  constructor(detail: string) {
    super(`proxy_failed: ${detail}`)
    this.detail = detail
  }
}

export interface ProxyDial {
  proxy: UpstreamProxy
  /** the proxy's address, already resolved and judged by the gateway */
  proxyAddress: string
  /** the destination the gateway checked (an IP address) */
  address: string
  port: number
  /** when the dial gives up (epoch ms): one deadline for every step, shared with the proxy's lookup */
  deadline: number
  /** extra CAs for an https:// proxy (tests); the system's otherwise */
  ca?: string[]
}

/** Opens a tunnel to address:port through the proxy: a socket carrying the destination's bytes. */
export async function dialThroughProxy(d: ProxyDial): Promise<net.Socket> {
  const left = () => Math.max(1, d.deadline - Date.now())
  const socket = await connectToProxy(d, left())
  try {
    if (d.proxy.scheme === 'socks5') return await socksConnect(d, socket, left())
    return await httpConnect(d, socket, left())
  } catch (e) {
    socket.destroy()
    throw e
  }
}

function errnoOf(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && /^[A-Z_0-9]{2,40}$/.test(code) ? code : 'error'
}

/** TCP (and for https:// TLS) to the proxy itself. */
function connectToProxy(d: ProxyDial, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const tlsOptions = d.proxy.scheme === 'https'
      ? { servername: net.isIP(d.proxy.host) ? undefined : d.proxy.host, ca: d.ca ? [...tls.rootCertificates, ...d.ca] : undefined, ALPNProtocols: ['http/1.1'] }
      : null
    const s: net.Socket = tlsOptions
      ? tls.connect({ host: d.proxyAddress, port: d.proxy.port, ...tlsOptions })
      : net.connect({ host: d.proxyAddress, port: d.proxy.port })
    const timer = setTimeout(() => s.destroy(new ProxyError('timed out')), timeoutMs)
    s.once(tlsOptions ? 'secureConnect' : 'connect', () => { clearTimeout(timer); s.removeListener('error', fail); resolve(s) })
    const fail = (e: unknown) => {
      clearTimeout(timer)
      reject(e instanceof ProxyError ? e : new ProxyError(errnoOf(e)))
    }
    s.once('error', fail)
  })
}

function authority(address: string, port: number): string {
  return `${net.isIPv6(address) ? `[${address}]` : address}:${port}`
}

/** HTTP CONNECT over the open socket (Node's client parses the reply). */
function httpConnect(d: ProxyDial, socket: net.Socket, timeoutMs: number): Promise<net.Socket> {
  const target = authority(d.address, d.port)
  const headers: Record<string, string> = { host: target }
  if (d.proxy.username !== undefined) {
    headers['proxy-authorization'] = `Basic ${Buffer.from(`${d.proxy.username}:${d.proxy.password ?? ''}`).toString('base64')}`
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ method: 'CONNECT', path: target, headers, createConnection: () => socket })
    const timer = setTimeout(() => req.destroy(new ProxyError('no answer to CONNECT in time')), timeoutMs)
    req.once('connect', (res: http.IncomingMessage, tunnel: net.Socket, head: Buffer) => {
      clearTimeout(timer)
      const status = res.statusCode ?? 0
      if (status === 200) {
        if (head.length) tunnel.unshift(head)
        return resolve(tunnel)
      }
      tunnel.destroy()
      reject(new ProxyError(`HTTP ${status}`))
    })
    req.once('response', (res: http.IncomingMessage) => {
      // not a CONNECT answer at all
      clearTimeout(timer)
      res.resume()
      socket.destroy()
      reject(new ProxyError(`HTTP ${res.statusCode ?? 0}, not an answer to CONNECT`))
    })
    req.once('error', (e) => {
      clearTimeout(timer)
      reject(e instanceof ProxyError ? e : new ProxyError(errnoOf(e)))
    })
    req.end()
  })
}

/** SOCKS5 CONNECT over the open socket, by the `socks` library (docs/dependencies.md). */
async function socksConnect(d: ProxyDial, socket: net.Socket, timeoutMs: number): Promise<net.Socket> {
  const auth = d.proxy.username !== undefined ? { userId: d.proxy.username, password: d.proxy.password ?? '' } : {}
  try {
    const { socket: tunnel } = await SocksClient.createConnection({
      proxy: { host: d.proxyAddress, port: d.proxy.port, type: 5, ...auth },
      command: 'connect',
      destination: { host: d.address, port: d.port },
      existing_socket: socket,
      timeout: timeoutMs,
    })
    return tunnel
  } catch (e) {
    throw socksFailure(e)
  }
}

/** The library's errors are messages (constants.ts ERRORS); their gist becomes the detail. */
export function socksFailure(e: unknown): ProxyError {
  const message = e instanceof Error ? e.message : ''
  if (/Authentication failed|no accepted authentication type/i.test(message)) return new ProxyError('SOCKS5 authentication failed')
  const rejected = /proxy rejected connection - (\w+)/i.exec(message)
  if (rejected) return new ProxyError(`SOCKS5 ${rejected[1]}`)
  if (/timed out/i.test(message)) return new ProxyError('timed out')
  if (/closed/i.test(message)) return new ProxyError('closed during the SOCKS5 handshake')
  return new ProxyError('SOCKS5 handshake failed')
}
