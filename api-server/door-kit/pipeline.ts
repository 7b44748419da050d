// A door as an ordered list of named checks, as node-oidc-provider's actions read: each
// check does one thing and either lets the request go on (undefined) or answers it (an
// Answer, or a thrown error). The order is the door's contract. An answer is wrapped
// because a Fastify reply is thenable: awaiting it bare would wait for the response.
import type { FastifyReply } from 'fastify'

/** A check's answer: the reply it sent, which ends the request. */
export interface Answer {
  reply: FastifyReply
}

export const answer = (reply: FastifyReply): Answer => ({ reply })

/** One check of a door: undefined lets the request go on. */
export type DoorCheck<S> = (state: S) => Answer | void | Promise<Answer | void>

/** Runs `checks` in order; the first answer ends the request, undefined when all passed. */
export async function runChecks<S>(checks: readonly DoorCheck<S>[], state: S): Promise<Answer | undefined> {
  for (const check of checks) {
    const answered = await check(state)
    if (answered) return answered
  }
  return undefined
}
