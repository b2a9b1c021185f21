// Where a host keeps its multiplexer servers: a private directory derived from the host's
// socket path, so a restarted host on the same socket finds the sessions its predecessor left.

import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface MuxPaths {
  dir: string;
  tmuxSocket: string;
  tmuxConf: string;
  /** SCREENDIR: screen keeps one socket per session here. */
  screenDir: string;
  screenRc: string;
}

/**
 * A Unix socket path holds at most 107 bytes, and screen's sockets are named
 * `<dir>/screen/<pid>.pw-<session id>`: 55 bytes after the directory for a UUID session id.
 * A longer directory moves to a short private one under the temp dir.
 */
const MAX_DIR_LENGTH = 52;

/** The longest Unix socket path (sun_path is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;

export function muxPaths(hostSocket: string): MuxPaths {
  const resolved = path.resolve(hostSocket);
  let dir = path.join(path.dirname(resolved), `${path.basename(resolved, '.sock')}.mux`);
  if (Buffer.byteLength(dir) > MAX_DIR_LENGTH) {
    const hash = createHash('sha256').update(resolved).digest('hex').slice(0, 12);
    dir = path.join(tmpdir(), `pty-ws-${process.getuid?.() ?? 'u'}-${hash}`);
  }
  return {
    dir,
    tmuxSocket: path.join(dir, 'tmux'),
    tmuxConf: path.join(dir, 'tmux.conf'),
    screenDir: path.join(dir, 'screen'),
    screenRc: path.join(dir, 'screenrc'),
  };
}

/**
 * Creates a directory only this user can enter, or checks that an existing one is: other
 * users must not reach a multiplexer that runs our sessions. Throws when it is not ours.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = lstatSync(dir);
  if (!info.isDirectory()) throw new Error(`${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new Error(`${dir} belongs to uid ${info.uid}, not to this user`);
  if ((info.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}
