// Auth-state capture: Playwright's storageState (cookies + localStorage) plus the
// sessionStorage of every open page, which Playwright does not include. The result is
// credential-equivalent: the api-server seals it; nothing here logs it.
import type { SessionStorageEntry, StorageStateResult } from '../../contracts/pod-api.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'

export async function storageState(session: PodSession): Promise<StorageStateResult> {
  void session.page // 409 before configure
  const context = session.context!
  try {
    const [state, ...perPage] = await Promise.all([
      context.storageState(),
      ...context.pages().map((p) => p.mainFrame().evaluate(readSessionStorage).catch(() => null)), // a page mid-navigation has no sessionStorage to give
    ])
    const byOrigin = new Map<string, SessionStorageEntry>()
    for (const e of perPage) if (e && e.entries.length) byOrigin.set(e.origin, e)
    return {
      cookies: state.cookies as unknown as Array<Record<string, unknown>>,
      origins: state.origins.map((o) => ({ origin: o.origin, localStorage: o.localStorage })),
      sessionStorage: [...byOrigin.values()],
    }
  } catch (e) {
    throw actionError(e, 'storage_state')
  }
}

function readSessionStorage(): SessionStorageEntry | null {
  if (location.origin === 'null') return null
  const entries: Array<{ name: string; value: string }> = []
  for (let i = 0; i < sessionStorage.length; i++) {
    const name = sessionStorage.key(i)!
    entries.push({ name, value: sessionStorage.getItem(name) ?? '' })
  }
  return { origin: location.origin, entries }
}
