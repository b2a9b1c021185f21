// File transfer: upload a file into a shell session's working directory, download one from it,
// over REST with pty:control on the session (docs/files.md; which sessions and which directory:
// file-directory.ts). Chosen over trzsz/ZMODEM in the terminal: it works whatever the shell is
// running at the moment (a full-screen program, a REPL), needs nothing installed in the session,
// and the server checks scope, name and size before a byte is written.
import { Hono, type Context } from 'hono';
import { coversSession, hasScope, type Principal } from '../src/auth/principal.ts';
import { BindingError, restError } from '../src/protocol/errors.ts';
import { base64ToBytes } from '../src/core/ids.ts';
import type { AppDeps } from './deps.ts';
import { transferDirectory } from './file-directory.ts';
import { readTextWithin } from './request.ts';

type Env = { Variables: { principal: Principal } };

/** Largest file either way: a terminal's file transfer, not a file server. */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** The upload's JSON: base64 is 4/3 of the bytes, plus the name and the braces. */
const MAX_UPLOAD_BODY = Math.ceil((MAX_FILE_BYTES * 4) / 3) + 4096;

/** A plain file name: no directory part, not `.`/`..`, no NUL, at most 255 bytes. */
function fileName(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '' || raw === '.' || raw === '..' || /[/\0]/.test(raw) || new TextEncoder().encode(raw).length > 255) {
    throw new BindingError('INVALID_REQUEST', 'name must be a plain file name (no "/", not "." or "..", at most 255 bytes): files go into the session\'s working directory itself');
  }
  return raw;
}

const SYSTEM_ERRORS: Record<string, [number, string, string]> = {
  EEXIST: [409, 'files.exists', 'a file of that name is already there: uploads never replace one'],
  ENOENT: [404, 'files.not_found', 'no such file in the session\'s working directory (or the directory is gone)'],
  ELOOP: [403, 'files.symlink', 'that name is a symbolic link: not followed'],
  EISDIR: [403, 'files.not_regular', 'that is not a regular file'],
  EACCES: [403, 'files.permission', 'the server may not read or write that file'],
  EFBIG: [413, 'files.too_large', `files are at most ${MAX_FILE_BYTES} bytes`],
};

export function fileRoutes(deps: AppDeps): Hono<Env> {
  const { config, store } = deps;
  const app = new Hono<Env>();

  /** The session's working directory once the caller may transfer files there, or an answer to send. */
  const workingDir = async (c: Context<Env>): Promise<string | Response> => {
    const principal = c.get('principal');
    const id = c.req.param('session_id') ?? '';
    if (!coversSession(principal, id)) throw new BindingError('PERMISSION_DENIED', `this bearer does not cover session ${id}`);
    if (!hasScope(principal, 'pty:control')) throw new BindingError('PERMISSION_DENIED', 'file transfer needs pty:control on the session');
    const rec = await store.getSession(config.instanceId, id);
    const session = rec && (await deps.hub.session(id));
    if (!session) return c.json(restError('not_found', `unknown session ${id}`), 404);
    // The router writes as its own user, outside any confinement: not for sessions that run as another user or in a sandbox.
    if (!deps.sessionFiles || config.sessionUser !== undefined || config.sessionSandbox !== 'none') {
      return c.json(restError('files.unavailable', 'file transfer is off here: this runtime has none, or sessions run as another user or in a sandbox (PTY_WS_SESSION_USER, PTY_WS_SESSION_SANDBOX)'), 501);
    }
    // The record as this router has it: ahead of the store on a start or an end just now.
    const where = transferDirectory({ record: session.latestRecord, ending: session.ending }, config.defaultShell);
    return 'dir' in where ? where.dir : c.json(restError(where.code, where.message), where.status);
  };
  const failed = (c: Context, e: unknown) => {
    const code = (e as { code?: unknown } | null)?.code;
    const known = typeof code === 'string' ? SYSTEM_ERRORS[code] : undefined;
    if (!known) throw e;
    return c.json(restError(known[1], known[2]), known[0] as 404);
  };
  const audit = (c: Context<Env>, what: string, fields: Record<string, unknown>) =>
    deps.hub.deps.logger.log('info', what, { principal: c.get('principal').id, session: c.req.param('session_id'), ...fields });

  app.post('/', async (c) => {
    // Refused before the body is read, and asked again before anything is written.
    const first = await workingDir(c);
    if (typeof first !== 'string') return first;
    const length = Number(c.req.header('content-length') ?? NaN);
    if (length > MAX_UPLOAD_BODY) return c.json(restError('files.too_large', `files are at most ${MAX_FILE_BYTES} bytes`), 413);
    // Read within the limit: a body sent without a length is not taken whole first (docs/security.md, 8).
    const text = await readTextWithin(c, MAX_UPLOAD_BODY);
    if (text === null) return c.json(restError('files.too_large', `files are at most ${MAX_FILE_BYTES} bytes`), 413);
    let body: { name?: unknown; content_base64?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new BindingError('INVALID_REQUEST', 'the body must be a JSON object {name, content_base64}');
    }
    const name = fileName(body?.name);
    const bytes = typeof body.content_base64 === 'string' ? base64ToBytes(body.content_base64) : null;
    if (!bytes) throw new BindingError('INVALID_REQUEST', 'content_base64 must be the file\'s bytes in base64');
    if (bytes.byteLength > MAX_FILE_BYTES) return c.json(restError('files.too_large', `files are at most ${MAX_FILE_BYTES} bytes`), 413);
    // The session may have ended while the body came in.
    const dir = await workingDir(c);
    if (typeof dir !== 'string') return dir;
    try {
      await deps.sessionFiles!.write(dir, name, bytes);
    } catch (e) {
      return failed(c, e);
    }
    audit(c, 'audit.file_uploaded', { name, bytes: bytes.byteLength });
    return c.json({ name, directory: dir, bytes: bytes.byteLength }, 201);
  });

  app.get('/:name', async (c) => {
    const dir = await workingDir(c);
    if (typeof dir !== 'string') return dir;
    const name = fileName(c.req.param('name'));
    let bytes: Uint8Array;
    try {
      bytes = await deps.sessionFiles!.read(dir, name, MAX_FILE_BYTES);
    } catch (e) {
      return failed(c, e);
    }
    audit(c, 'audit.file_downloaded', { name, bytes: bytes.byteLength });
    return new Response(new Uint8Array(bytes), {
      headers: {
        'content-type': 'application/octet-stream',
        'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
        'x-content-type-options': 'nosniff',
      },
    });
  });

  return app;
}
