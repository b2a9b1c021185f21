// One table for every binding error code: A2A error, HTTP status, close code, retryability.
import type { ErrorFramePayload } from './server-payloads.ts';

export type BindingCode =
  | 'TASK_NOT_FOUND'
  | 'TASK_NOT_CANCELABLE'
  | 'INVALID_REQUEST'
  | 'UNSUPPORTED_OPERATION'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'RATE_LIMITED'
  | 'INTERNAL'
  | 'REPLAY_OUT_OF_RANGE';

interface CodeInfo {
  /** A2A JSON-RPC error code; where A2A v1.0 names no error, InvalidRequest's, and the reason says which. */
  a2aCode: number;
  a2aName: string;
  http: number;
  /** Close code when the error is fatal for the connection. */
  close: number;
  retryable: boolean;
}

export const ERROR_TABLE: Record<BindingCode, CodeInfo> = {
  TASK_NOT_FOUND: { a2aCode: -32001, a2aName: 'TaskNotFoundError', http: 404, close: 4404, retryable: false },
  TASK_NOT_CANCELABLE: { a2aCode: -32002, a2aName: 'TaskNotCancelableError', http: 400, close: 4400, retryable: false },
  INVALID_REQUEST: { a2aCode: -32600, a2aName: 'InvalidRequest', http: 400, close: 4400, retryable: false },
  UNSUPPORTED_OPERATION: { a2aCode: -32004, a2aName: 'UnsupportedOperationError', http: 400, close: 4400, retryable: false },
  UNAUTHENTICATED: { a2aCode: -32600, a2aName: 'Unauthenticated', http: 401, close: 4401, retryable: false },
  PERMISSION_DENIED: { a2aCode: -32600, a2aName: 'PermissionDenied', http: 403, close: 4403, retryable: false },
  RATE_LIMITED: { a2aCode: -32600, a2aName: 'RateLimited', http: 429, close: 4429, retryable: true },
  INTERNAL: { a2aCode: -32603, a2aName: 'InternalError', http: 500, close: 1011, retryable: true },
  REPLAY_OUT_OF_RANGE: { a2aCode: -32600, a2aName: 'ReplayOutOfRange', http: 400, close: 4400, retryable: false },
};

/**
 * PTY-level errors (pty-extensions-v1 §5, docs/protocol.md §7.4): sent as a `pty.session_frame` of
 * kind `Error` with `code` and `message`, to the connection concerned; the connection stays open.
 * They are the extension's, not A2A errors, so they carry no `a2a_error`.
 */
export type PtyErrorCode = 'PTY_WRITE_FAILED' | 'PTY_RESIZE_FAILED' | 'PTY_OUTPUT_LAGGED' | 'KEYFRAME_UNAVAILABLE';

/** A PTY-level error as a value: a handler throws it, the connection sends it as a `pty.session_frame` Error. */
export class PtyError extends Error {
  constructor(
    readonly code: PtyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PtyError';
  }
}

/** The reason of a pre-A2A-named error is the binding code itself (docs/protocol.md §7.1). */
const A2A_REASON: Partial<Record<BindingCode, string>> = {
  TASK_NOT_FOUND: 'TASK_NOT_FOUND',
  TASK_NOT_CANCELABLE: 'TASK_NOT_CANCELABLE',
};

export interface A2AError {
  code: number;
  message: string;
  data: Array<{
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo';
    reason: string;
    domain: string;
    metadata: Record<string, string>;
  }>;
}

/** An error as a value: what a handler returns or throws at a protocol boundary. */
export class BindingError extends Error {
  readonly code: BindingCode;
  readonly metadata: Record<string, string>;
  /** Extra, code-specific fields placed in the Error frame's payload. */
  readonly extra: ErrorExtra;
  readonly fatal: boolean;
  /** The close code when fatal: the table's, unless the situation names a more exact one (e.g. 4404). */
  readonly closeCode: number;
  /** A more specific A2A error than the code's own (e.g. ContentTypeNotSupportedError for INVALID_REQUEST). */
  readonly a2a: A2AErrorKind | undefined;
  /** The HTTP status over REST: the table's, unless the situation names a more exact one (e.g. 507 for a full disk). */
  readonly httpStatus: number;

  constructor(
    code: BindingCode,
    message: string,
    opts: { metadata?: Record<string, string>; extra?: ErrorExtra; fatal?: boolean; closeCode?: number; a2a?: A2AErrorKind; http?: number } = {},
  ) {
    super(message);
    this.name = 'BindingError';
    this.code = code;
    this.metadata = opts.metadata ?? {};
    this.extra = opts.extra ?? {};
    this.fatal = opts.fatal ?? false;
    this.closeCode = opts.closeCode ?? ERROR_TABLE[code].close;
    this.a2a = opts.a2a;
    this.httpStatus = opts.http ?? ERROR_TABLE[code].http;
  }

  get info(): CodeInfo {
    return ERROR_TABLE[this.code];
  }
}

/** A2A errors that share a binding code with others (docs/protocol.md §7.1). */
export const A2A_ERRORS = {
  contentTypeNotSupported: { code: -32005, reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
  /** JSON-RPC 2.0's own: the params do not fit the method (A2A's RequestMalformedError). */
  invalidParams: { code: -32602, reason: 'INVALID_PARAMS' },
  /** JSON-RPC 2.0's own, for the standard JSON-RPC binding (docs/a2a.md). */
  parseError: { code: -32700, reason: 'PARSE_ERROR' },
  methodNotFound: { code: -32601, reason: 'METHOD_NOT_FOUND' },
  versionNotSupported: { code: -32009, reason: 'VERSION_NOT_SUPPORTED' },
  /** A path of an A2A binding that serves nothing: another instance's, an unknown HTTP+JSON route. */
  notFound: { code: -32601, reason: 'NOT_FOUND' },
  /** An HTTP+JSON route asked with a method it does not take. */
  methodNotAllowed: { code: -32601, reason: 'METHOD_NOT_ALLOWED' },
} as const;
export type A2AErrorKind = (typeof A2A_ERRORS)[keyof typeof A2A_ERRORS];

export function a2aError(code: BindingCode, message: string, metadata: Record<string, string> = {}, kind?: A2AErrorKind): A2AError {
  return {
    code: kind?.code ?? ERROR_TABLE[code].a2aCode,
    message,
    data: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: kind?.reason ?? A2A_REASON[code] ?? code,
        domain: 'a2a-protocol.org',
        metadata,
      },
    ],
  };
}

/** The Error frame's code-specific fields (docs/protocol.md §7). */
export type ErrorExtra = Partial<Pick<ErrorFramePayload, 'reason' | 'oldest_retained_sequence' | 'current_sequence' | 'first_lost_sequence' | 'last_lost_sequence'>>;

export function errorPayload(err: BindingError): ErrorFramePayload & { retryable: boolean; a2a_error: A2AError } {
  return {
    ...err.extra,
    code: err.code,
    message: err.message,
    retryable: err.info.retryable,
    a2a_error: a2aError(err.code, err.message, err.metadata, err.a2a),
  };
}

/** Any thrown value as a BindingError; unknown faults become INTERNAL without leaking details. */
export function toBindingError(e: unknown): BindingError {
  if (e instanceof BindingError) return e;
  return new BindingError('INTERNAL', 'internal server error');
}

/**
 * REST error body: `{"error": {"code", "message"}}` (docs/protocol.md §10). REST codes are lower
 * snake_case, dotted where a reason names its subject (`session_backend.not_implemented`): a
 * binding code (`PERMISSION_DENIED`) reads `permission_denied` here, so one REST client compares
 * one letter case. The frames and the A2A bindings keep the binding's upper-case codes.
 */
export function restError(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code: code.toLowerCase(), message } };
}
