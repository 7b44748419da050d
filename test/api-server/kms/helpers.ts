// Small helpers shared by the KMS tests. None of them ever puts a secret into a test
// message: outcomes are reduced to an error class/code before anything is asserted.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'

/** Awaits p and returns the error it rejected with; a resolve becomes the string 'resolved' (its value is wiped, never shown). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    const v = await p
    if (Buffer.isBuffer(v)) v.fill(0)
    return 'resolved'
  } catch (e) {
    return e
  }
}

/** The SealError failure code of an outcome, or a neutral description otherwise. */
export function failureOf(e: unknown): string {
  if (e === 'resolved') return 'resolved'
  const f = (e as { failure?: unknown })?.failure
  return typeof f === 'string' ? f : `other:${(e as Error)?.name ?? typeof e}`
}

export async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nightjar-kms-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}
