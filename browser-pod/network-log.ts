// The session's network request log: method, URL without its query, status, type and
// timing of every request its pages made — never a body, never a credential header.
import type { PodSession } from './session.ts'

export class NetworkLog {
  constructor(session: PodSession) {
    void session
  }
}
