// Errors of the toolbox: the network log and evaluate.
import type { ApiEntry } from './entry.ts'

export const INSPECT_ERRORS = {
  evaluateIdentityBound: {
    status: 403, code: 'forbidden', reason: 'evaluate_identity_bound', message: 'evaluate is refused on a session with a bound identity',
    spec: null, when: 'evaluate on a session started with a persona (page JavaScript could read what the sealed fill typed); refused before the page is reached',
  },
  evaluateSyntax: {
    status: 400, code: 'bad_request', reason: 'evaluate_syntax', message: 'expression is neither a JavaScript expression nor a function body',
    spec: null, when: 'evaluate with code that does not parse; nothing runs',
  },
  evaluateThrew: {
    status: 400, code: 'bad_request', reason: 'evaluate_threw', message: (name: string, detail: string) => `the expression threw ${name}${detail ? `: ${detail}` : ''}`, args: ['name', 'detail'],
    spec: null, when: 'the evaluated code threw (or its promise rejected) in the page',
  },
  evaluateNotSerializable: {
    status: 400, code: 'bad_request', reason: 'not_serializable', message: (what: string) => `the result is not JSON-serialisable (${what})`, args: ['what'],
    spec: null, when: 'the evaluated code returned a function, symbol, bigint, DOM node, window, non-finite number or circular structure',
  },
  evaluateResultTooLarge: {
    status: 400, code: 'bad_request', reason: 'result_too_large', message: (max: number) => `the result is larger than ${max} characters of JSON`, args: ['max'],
    spec: null, when: 'the evaluated code returned more JSON than an evaluate result may carry',
  },
} as const satisfies Record<string, ApiEntry>
