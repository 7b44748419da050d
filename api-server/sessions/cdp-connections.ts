// The CDP connections this process relays, by session, so that ending a session (or a
// person taking control of it in the console) closes them at once. The relay (cdp/relay.ts)
// registers each connection's closer here; the session side calls closeCdp without
// knowing anything of the relay. Session ids are unique, so apps sharing a process (tests)
// share the map harmlessly.
const open = new Map<string, Set<() => void>>()

/** Registers a connection's closer; the returned function forgets it (the connection ended). */
export function trackCdpConnection(sessionId: string, close: () => void): () => void {
  let set = open.get(sessionId)
  if (!set) open.set(sessionId, (set = new Set()))
  set.add(close)
  return () => {
    const s = open.get(sessionId)
    s?.delete(close)
    if (s && !s.size) open.delete(sessionId)
  }
}

/** Closes every CDP connection this process relays for the session. */
export function closeCdp(sessionId: string): void {
  for (const close of open.get(sessionId) ?? []) close()
}
