// The session's files: those put into it over the API (for file inputs) and the
// downloads its pages made, each within limits.
import type { PodSession } from './session.ts'

export class SessionFiles {
  constructor(session: PodSession) {
    void session
  }
}
