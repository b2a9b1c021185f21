// The state directory lock's runtime calls on Deno (the lock itself: src/core/state-lock.ts).
import { holdExclusiveFileLock } from '../exclusive-file-lock.ts';
import type { StateLockPort } from '../../core/state-lock.ts';
import { bootId } from './journal-file.ts';

export const denoStateLockPort: StateLockPort = {
  pid: Deno.pid,
  get bootId() {
    return bootId();
  },
  lockFile: async (path) => holdExclusiveFileLock(path),
  realPath: (path) => Deno.realPath(path),
  readText: (path) => Deno.readTextFile(path).catch((e: unknown) => (e instanceof Deno.errors.NotFound ? null : Promise.reject(e))),
  createNew: (path, text) =>
    Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 }).then(
      () => true,
      (e: unknown) => (e instanceof Deno.errors.AlreadyExists ? false : Promise.reject(e)),
    ),
  bind: (name, greeting) => {
    let listener: Deno.Listener;
    try {
      listener = Deno.listen({ transport: 'unix', path: name });
    } catch (e) {
      if (e instanceof Deno.errors.AddrInUse) return Promise.resolve(null);
      return Promise.reject(e);
    }
    // The lock must not keep the process alive on its own.
    listener.unref();
    const bytes = new TextEncoder().encode(greeting);
    void (async () => {
      for await (const conn of listener) {
        void conn.write(bytes).catch(() => 0).finally(() => conn.close());
      }
    })().catch(() => undefined);
    return Promise.resolve({
      release: () => {
        try {
          listener.close();
        } catch {
          // closed already
        }
        return Promise.resolve();
      },
    });
  },
  ask: async (name, ms) => {
    let conn: Deno.UnixConn;
    try {
      conn = await Deno.connect({ transport: 'unix', path: name });
    } catch {
      return null;
    }
    const timer = setTimeout(() => conn.close(), ms);
    try {
      return await new Response(conn.readable).text();
    } catch {
      return 'timeout';
    } finally {
      clearTimeout(timer);
    }
  },
};
