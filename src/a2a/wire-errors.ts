// Errors on A2A v1.0's standard bindings: the JSON-RPC error object and the HTTP+JSON error body
// (google.rpc.Status with an ErrorInfo detail), from the one BindingError table (docs/a2a.md).
import { a2aError, type A2AError, type BindingError } from '../protocol/errors.ts';

/** HTTP+JSON status names (google.rpc.Code) by binding code; 400s that are about state, not input, are FAILED_PRECONDITION. */
const STATUS_NAME: Record<BindingError['code'], string> = {
  TASK_NOT_FOUND: 'NOT_FOUND',
  TASK_NOT_CANCELABLE: 'FAILED_PRECONDITION',
  UNSUPPORTED_OPERATION: 'FAILED_PRECONDITION',
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  RATE_LIMITED: 'RESOURCE_EXHAUSTED',
  INTERNAL: 'INTERNAL',
  REPLAY_OUT_OF_RANGE: 'OUT_OF_RANGE',
};

/**
 * A2A v1.0 leaves auth and rate errors to the server (-32000..-32099): on the JSON-RPC binding
 * these get codes of their own (DECISIONS §19), so a client does not read "your request was
 * malformed" (-32600) where it was refused or throttled. The ErrorInfo reason stays the binding code.
 */
const JSON_RPC_SERVER_CODES: Partial<Record<BindingError['code'], number>> = {
  UNAUTHENTICATED: -32050,
  PERMISSION_DENIED: -32051,
  RATE_LIMITED: -32052,
  REPLAY_OUT_OF_RANGE: -32053,
};

export function jsonRpcError(err: BindingError): A2AError {
  const error = a2aError(err.code, err.message, err.metadata, err.a2a);
  const own = err.a2a === undefined ? JSON_RPC_SERVER_CODES[err.code] : undefined;
  return own === undefined ? error : { ...error, code: own };
}

/**
 * JSON-RPC answers its errors with HTTP 200, except where HTTP itself has the word: a refused
 * credential (401), a refused scope (403), throttling (429) and our own faults (500).
 */
export function jsonRpcHttpStatus(err: BindingError): number {
  return [401, 403, 429, 500].includes(err.info.http) ? err.info.http : 200;
}

/** Statuses that say more than the binding code's, for an HTTP status a route names itself. */
const STATUS_BY_HTTP: Record<number, string> = { 404: 'NOT_FOUND', 405: 'UNIMPLEMENTED' };

/** The HTTP+JSON binding's error body (google.rpc.Status) and its HTTP status. */
export function restErrorBody(err: BindingError): { error: { code: number; status: string; message: string; details: A2AError['data'] } } {
  return { error: { code: err.httpStatus, status: STATUS_BY_HTTP[err.httpStatus] ?? STATUS_NAME[err.code], message: err.message, details: jsonRpcError(err).data } };
}
