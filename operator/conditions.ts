// Status conditions with metav1 semantics (apimachinery meta.SetStatusCondition):
// lastTransitionTime moves only when `status` flips, so recomputing the same state gives
// a byte-identical list — which is what lets a reconciler skip writing a settled object.
import type { Condition } from '../ports/ports.ts'

/** RFC 3339 with second precision, the form metav1.Time serialises to. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>

/** Returns a new list with `next` set; order of existing types is kept, new ones appended. */
export function setCondition(conditions: readonly Condition[] | undefined, next: ConditionInput, now: Date): Condition[] {
  const list = [...(conditions ?? [])]
  const i = list.findIndex((c) => c.type === next.type)
  const prev = i >= 0 ? list[i] : undefined
  const cond: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    lastTransitionTime: prev && prev.status === next.status ? prev.lastTransitionTime : rfc3339(now),
    ...(next.observedGeneration !== undefined ? { observedGeneration: next.observedGeneration } : {}),
  }
  if (i >= 0) list[i] = cond
  else list.push(cond)
  return list
}

export function setConditions(conditions: readonly Condition[] | undefined, next: ConditionInput[], now: Date): Condition[] {
  return next.reduce<Condition[]>((list, c) => setCondition(list, c, now), [...(conditions ?? [])])
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type)
}
