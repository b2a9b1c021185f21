// Holding the slave side of a PTY open so that its last output stays readable.
import { constants as fsConstants, openSync } from 'node:fs';
import type { IPty } from 'node-pty';
import type { Logger } from '../src/ports/logger.ts';

/**
 * Linux may end the master's read stream with output still unread once the last descriptor
 * of the slave side closes, so a program that prints a lot and exits loses its tail
 * (node-pty #72, #85). Holding a slave descriptor keeps that output readable; node-pty then
 * reports the exit through its fallback 200 ms after reaping instead of on EIO.
 */
export function holdSlave(pty: IPty, log: Logger): number | undefined {
  // A getter of node-pty's UnixTerminal that its typings leave out.
  const ptsName = (pty as IPty & { ptsName?: unknown }).ptsName;
  if (typeof ptsName !== 'string') {
    log.log('warn', 'node-pty exposes no ptsName: fast-exiting sessions may lose output');
    return undefined;
  }
  try {
    // O_NOCTTY: a host started detached is a session leader and must not acquire a terminal.
    return openSync(ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK);
  } catch (err) {
    log.log('warn', 'could not hold the PTY slave open', { err, ptsName });
    return undefined;
  }
}
