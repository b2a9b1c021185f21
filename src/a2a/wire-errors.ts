// Errors on A2A v1.0's standard bindings: the JSON-RPC error object and the HTTP+JSON error body
// (google.rpc.Status with an ErrorInfo detail), from the one BindingError table (docs/a2a.md).
import { a2aError, type A2AError, type BindingError } from '../errors.ts';

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

export function jsonRpcError(err: BindingError): A2AError {
  return a2aError(err.code, err.message, err.metadata, err.a2a);
}

/**
 * JSON-RPC answers its errors with HTTP 200, except where HTTP itself has the word: a refused
 * credential (401), a refused scope (403), throttling (429) and our own faults (500).
 */
export function jsonRpcHttpStatus(err: BindingError): number {
  return [401, 403, 429, 500].includes(err.info.http) ? err.info.http : 200;
}

export function restErrorBody(err: BindingError): { error: { code: number; status: string; message: string; details: A2AError['data'] } } {
  return { error: { code: err.info.http, status: STATUS_NAME[err.code], message: err.message, details: jsonRpcError(err).data } };
}
