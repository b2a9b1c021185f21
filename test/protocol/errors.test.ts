// The one table: binding code ↔ A2A error ↔ HTTP status ↔ close code (docs/protocol.md §7.1).
import { describe, expect, it } from 'vitest';
import { BindingError, ERROR_TABLE, errorPayload, toBindingError } from '../../src/protocol/errors.ts';

describe('error table', () => {
  it('maps every binding code of the spec to its A2A code, HTTP status and close code', () => {
    const rows = Object.fromEntries(Object.entries(ERROR_TABLE).map(([code, i]) => [code, [i.a2aCode, i.http, i.close]]));
    expect(rows).toEqual({
      TASK_NOT_FOUND: [-32001, 404, 4404],
      TASK_NOT_CANCELABLE: [-32002, 400, 4400],
      INVALID_REQUEST: [-32600, 400, 4400],
      UNSUPPORTED_OPERATION: [-32004, 400, 4400],
      UNAUTHENTICATED: [-32600, 401, 4401],
      PERMISSION_DENIED: [-32600, 403, 4403],
      RATE_LIMITED: [-32600, 429, 4429],
      INTERNAL: [-32603, 500, 1011],
      REPLAY_OUT_OF_RANGE: [-32600, 400, 4400],
    });
  });

  it('builds the Error payload with a canonical a2a_error', () => {
    const p = errorPayload(new BindingError('TASK_NOT_FOUND', 'Task t1 not found', { metadata: { taskId: 't1' } }));
    expect(p).toEqual({
      code: 'TASK_NOT_FOUND',
      message: 'Task t1 not found',
      retryable: false,
      a2a_error: {
        code: -32001,
        message: 'Task t1 not found',
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't1' } }],
      },
    });
  });

  it('turns an unexpected fault into INTERNAL without leaking its message', () => {
    const e = toBindingError(new Error('secret path /etc/x'));
    expect(e.code).toBe('INTERNAL');
    expect(e.message).not.toContain('secret');
    expect(e.closeCode).toBe(1011);
  });
});
