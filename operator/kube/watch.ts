// One watch stream over client-node's Watch, adapted to the port's WatchHandler: events in
// order, never concurrently, onClose exactly once (re-watch, relist on 410, or back off).
// An idle watchdog aborts a silent stream, a dead connection no FIN will end; handler
// errors end the watch, since client-node swallows them. Design: docs/operator.md#talking-to-the-api-server
import { Watch, type KubeConfig } from '@kubernetes/client-node'
import { errorForStatus, parseStatusBody, statusOf } from './errors.ts'
import type { WatchEvent, WatchHandle, WatchHandler } from '../../ports/ports.ts'

export interface WatchStreamOptions<T> {
  kc: KubeConfig
  /** collection path, e.g. /apis/nightjar.dev/v1/namespaces/ns/browsersessions */
  path: string
  fromResourceVersion: string
  labelSelector?: string
  allowBookmarks?: boolean
  /** asks the server to end the stream after this long (it adds no jitter; we do) */
  timeoutSeconds: number
  /** extra silence tolerated beyond timeoutSeconds before the stream is declared dead */
  idleGraceMs?: number
  kind: string
  convert: (raw: unknown) => T
  handler: WatchHandler<T>
}

export function watchStream<T>(opts: WatchStreamOptions<T>): WatchHandle {
  const { handler } = opts
  let stopped = false
  let ended = false
  let controller: AbortController | undefined
  let idleTimer: NodeJS.Timeout | undefined
  const idleMs = opts.timeoutSeconds * 1000 + (opts.idleGraceMs ?? 30_000)

  const cleanup = () => {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = undefined
    controller?.abort()
  }
  const finish = (err?: Error) => {
    if (stopped || ended) return
    ended = true
    cleanup()
    handler.onClose(err)
  }
  const armIdle = () => {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = setTimeout(() => finish(new Error(`watch of ${opts.kind} idle for ${idleMs} ms; assuming a dead connection`)), idleMs)
    idleTimer.unref()
  }

  const deliver = (event: WatchEvent<T>) => {
    try {
      handler.onEvent(event)
    } catch (err) {
      finish(err instanceof Error ? err : new Error(String(err)))
    }
  }

  const onLine = (type: string, obj: unknown) => {
    if (stopped || ended) return
    armIdle()
    const line = readLine(type, obj, opts)
    if (line?.error) finish(line.error)
    else if (line?.event) deliver(line.event)
  }

  const onDone = (err: unknown) => {
    if (!err) return finish()
    const status = statusOf(err)
    if (status) return finish(errorForStatus(status, opts.kind, ''))
    finish(err instanceof Error ? err : new Error(String(err)))
  }

  armIdle()
  new Watch(opts.kc).watch(opts.path, watchQuery(opts), onLine, onDone).then(
    (c) => {
      controller = c
      if (stopped || ended) c.abort()
    },
    (err) => onDone(err),
  )

  return {
    stop() {
      if (stopped) return
      stopped = true
      cleanup()
    },
  }
}

function watchQuery<T>(opts: WatchStreamOptions<T>): Record<string, string | number | boolean | undefined> {
  return {
    // '' means "start at the most recent version"; both '' and '0' give synthetic ADDED first
    resourceVersion: opts.fromResourceVersion || undefined,
    labelSelector: opts.labelSelector || undefined,
    allowWatchBookmarks: opts.allowBookmarks ? true : undefined,
    timeoutSeconds: opts.timeoutSeconds,
  }
}

/** one line of the stream as an event to deliver, an error that ends the watch, or nothing */
function readLine<T>(type: string, obj: unknown, opts: Pick<WatchStreamOptions<T>, 'convert' | 'kind'>): { event?: WatchEvent<T>; error?: Error } | undefined {
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { event: { type, object: opts.convert(obj) } }
    case 'BOOKMARK': {
      const rv = (obj as { metadata?: { resourceVersion?: unknown } })?.metadata?.resourceVersion
      return typeof rv === 'string' && rv ? { event: { type: 'BOOKMARK', resourceVersion: rv } } : undefined
    }
    case 'ERROR': {
      // the api-server reports a too-old resourceVersion as an ERROR event carrying a
      // Status with code 410, on an HTTP 200 stream
      const s = parseStatusBody(obj)
      return { error: errorForStatus({ code: s?.code ?? 500, reason: s?.reason ?? '', message: s?.message ?? 'watch error' }, opts.kind, '') }
    }
    default:
      return undefined // unknown event types are ignored, as client-go does
  }
}

/** server-side timeout with jitter in [base, 2*base), so replicas do not reconnect in lockstep */
export function jitteredTimeout(baseSeconds: number, random: () => number = Math.random): number {
  return Math.max(1, Math.floor(baseSeconds * (1 + random())))
}
