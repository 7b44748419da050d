// Typed errors of the ResourceClient port. Both adapters throw exactly these, so a
// reconciler or informer can branch on the class (or on `code`) without knowing whether
// it talks to the in-process store or to a real api-server (where the adapter maps the
// HTTP status / Status.reason onto the same classes).

export class ResourceError extends Error {
  readonly code: number
  readonly reason: string
  constructor(
    code: number,
    reason: string,
    message: string,
  ) {
    super(message)
    this.code = code
    this.reason = reason
    this.name = new.target.name
  }
}

/** 404: the named object does not exist. */
export class NotFoundError extends ResourceError {
  constructor(kind: string, name: string) {
    super(404, 'NotFound', `${kind} "${name}" not found`)
  }
}

/** 409: a resourceVersion precondition failed (somebody wrote in between). */
export class ConflictError extends ResourceError {
  constructor(kind: string, name: string, message = 'the object has been modified; please apply your changes to the latest version and try again') {
    super(409, 'Conflict', `${kind} "${name}": ${message}`)
  }
}

/** 409 AlreadyExists: create of a name that is taken. A ConflictError, as in Kubernetes. */
export class AlreadyExistsError extends ConflictError {
  constructor(kind: string, name: string) {
    super(kind, name, 'already exists')
    ;(this as { reason: string }).reason = 'AlreadyExists'
  }
}

/**
 * 410 Gone (reason Expired): a watch asked for a resourceVersion older than the retained
 * history. The only correct reaction is to relist and watch from the list's version.
 */
export class GoneError extends ResourceError {
  constructor(message = 'too old resource version') {
    super(410, 'Expired', message)
  }
}

/** 422: the request is well-formed but not allowed (e.g. a new finalizer on a deleting object). */
export class InvalidError extends ResourceError {
  constructor(kind: string, name: string, message: string) {
    super(422, 'Invalid', `${kind} "${name}" is invalid: ${message}`)
  }
}

/**
 * Not an error of the port: something a reconcile needs is not there yet but is on its way
 * (a warm-resume auth-state the api-server writes right after the resource). The controller
 * retries it with backoff like any failure, but logs it as routine, like a conflict: a race
 * that resolves itself, not trouble. Whoever throws it bounds the wait.
 */
export class NotReadyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NotReadyError'
  }
}

export const isNotFound = (e: unknown): e is NotFoundError => e instanceof ResourceError && e.code === 404
export const isConflict = (e: unknown): e is ConflictError => e instanceof ResourceError && e.code === 409
export const isGone = (e: unknown): e is GoneError => e instanceof ResourceError && e.code === 410
export const isNotReady = (e: unknown): e is NotReadyError => e instanceof NotReadyError
