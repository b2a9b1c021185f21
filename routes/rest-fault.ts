// How the REST routes answer what a handler threw (docs/protocol.md §10): a BindingError as it
// says; anything else is INTERNAL, answered as `internal server error` and nothing more, and
// logged here with its stack and causes so the fault can be traced from the log.
import type { ErrorHandler } from 'hono';
import { restError, toBindingError } from '../src/protocol/errors.ts';
import type { Logger } from '../src/ports/logger.ts';

/** An onError for REST routes; `msg` names what failed in the log line of an INTERNAL fault. */
export function restFaultHandler(logger: Logger, msg: string): ErrorHandler {
  return (e, c) => {
    const err = toBindingError(e);
    if (err.code === 'INTERNAL') logger.log('error', msg, { path: c.req.path, error: e });
    const code = (err.metadata.reason as string | undefined) ?? err.code;
    return c.json(restError(code, err.message), err.httpStatus as 400);
  };
}
