// Kubernetes Events (core/v1), so `kubectl describe browsersession …` says why a session
// failed or the pool cannot fill. Like client-go's recorder: fire-and-forget, repeats
// bump count, and bounded, so an outage drops events rather than queueing them without
// limit. Design: docs/operator.md#events
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node'
import { rfc3339 } from '../conditions.ts'
import type { EventRecorder, EventSubject, EventType, Logger } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import { DEFAULT_CALL, MERGE_PATCH } from './api-ops.ts'
import { kubeName } from './names.ts'

const REPEAT_WINDOW_MS = 10 * 60_000
const MAX_REMEMBERED = 4096
const MAX_IN_FLIGHT = 4
const MAX_BACKLOG = 1000
/** the api-server refuses longer messages */
const MAX_MESSAGE = 1024

/** kinds whose objects are named after Nightjar ids (names.ts maps them) */
const ID_NAMED_KINDS = new Set(['BrowserSession', 'Network'])

export interface KubeEventRecorderOptions {
  kc: KubeConfig
  /** source.component (default nightjar-operator) */
  component?: string
  /** this replica's pod name, as reportingInstance */
  instance?: string
  log?: Logger
  now?: () => number
}

interface Seen {
  name: string
  namespace: string
  count: number
  last: number
  /** the Event exists on the server (create succeeded) */
  created: boolean
  /** a write failed: the next repeat starts a new Event */
  broken: boolean
  /** writes of one Event happen in order: create, then each count bump */
  chain: Promise<void>
}

export class KubeEventRecorder implements EventRecorder {
  private readonly api: CoreV1Api
  private readonly log: Logger
  private readonly now: () => Date
  private readonly seen = new Map<string, Seen>()
  private readonly waiting: (() => void)[] = []
  private inFlight = 0
  private outstanding = 0
  private dropped = 0
  private idle: (() => void)[] = []
  private sequence = 0

  private readonly opts: KubeEventRecorderOptions
  constructor(opts: KubeEventRecorderOptions) {
    this.opts = opts
    this.api = opts.kc.makeApiClient(CoreV1Api)
    this.log = opts.log ?? silentLogger
    const clock = opts.now ?? Date.now
    this.now = () => new Date(clock())
  }

  record(subject: EventSubject, type: EventType, reason: string, message: string): void {
    if (!subject.namespace) return // only namespaced objects here
    if (this.outstanding >= MAX_BACKLOG) {
      if (this.dropped++ % 100 === 0) this.log.warn({ dropped: this.dropped }, 'event backlog full; dropping events')
      return
    }
    const at = this.now()
    const objectName = ID_NAMED_KINDS.has(subject.kind) ? kubeName(subject.name) : subject.name
    const text = message.slice(0, MAX_MESSAGE)
    const key = JSON.stringify([subject.uid, type, reason, text])
    let entry = this.seen.get(key)
    if (!entry || entry.broken || at.getTime() - entry.last >= REPEAT_WINDOW_MS) {
      // client-go's naming: the object's name and a unique hex suffix
      const name = `${objectName}.${(at.getTime() * 1000 + (this.sequence++ % 1000)).toString(16)}`
      entry = { name, namespace: subject.namespace, count: 0, last: 0, created: false, broken: false, chain: Promise.resolve() }
      this.remember(key, entry)
    }
    entry.count++
    entry.last = at.getTime()
    const e = entry
    const count = e.count
    const body: CoreV1Event = {
      metadata: { name: e.name, namespace: e.namespace },
      involvedObject: { apiVersion: subject.apiVersion, kind: subject.kind, name: objectName, namespace: e.namespace, uid: subject.uid },
      type,
      reason,
      message: text,
      source: { component: this.opts.component ?? 'nightjar-operator' },
      reportingComponent: this.opts.component ?? 'nightjar-operator',
      reportingInstance: this.opts.instance,
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
    }
    this.outstanding++
    e.chain = e.chain
      .then(() =>
        this.limited(async () => {
          if (e.broken) return
          if (!e.created) {
            await this.api.createNamespacedEvent({ namespace: e.namespace, body: { ...body, count } }, DEFAULT_CALL)
            e.created = true
          } else {
            await this.api.patchNamespacedEvent({ name: e.name, namespace: e.namespace, body: { count, lastTimestamp: rfc3339(at) } }, MERGE_PATCH)
          }
        }),
      )
      .catch((err) => {
        // best effort by design: the condition on the object says the same thing; the
        // Event may also be gone (event TTL), so the next repeat creates a new one
        e.broken = true
        this.log.debug({ err: String(err), reason, object: objectName }, 'could not record an event')
      })
      .finally(() => {
        if (--this.outstanding === 0) for (const done of this.idle.splice(0)) done()
      })
  }

  /** resolves once every recorded event has been written or given up on (tests, shutdown) */
  flush(): Promise<void> {
    if (this.outstanding === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  /** at most MAX_IN_FLIGHT api-server calls at once */
  private async limited(call: () => Promise<void>): Promise<void> {
    if (this.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => this.waiting.push(r))
    this.inFlight++
    try {
      await call()
    } finally {
      this.inFlight--
      this.waiting.shift()?.()
    }
  }

  private remember(key: string, entry: Seen): void {
    this.seen.delete(key)
    this.seen.set(key, entry)
    if (this.seen.size > MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value!)
  }
}
