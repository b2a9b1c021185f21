// The state directory lock's runtime calls on Node (the lock itself: src/core/state-lock.ts).
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { holdExclusiveFileLock } from '../exclusive-file-lock.ts';
import type { StateLockPort } from '../../core/state-lock.ts';
import { bootId } from './journal-file.ts';

export const nodeStateLockPort: StateLockPort = {
  pid: process.pid,
  get bootId() {
    return bootId();
  },
  lockFile: async (path) => holdExclusiveFileLock(path),
  realPath: (path) => realpath(path),
  readText: (path) => readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e))),
  createNew: (path, text) =>
    writeFile(path, text, { flag: 'wx', mode: 0o600 }).then(
      () => true,
      (e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? false : Promise.reject(e)),
    ),
  bind: (name, greeting) =>
    new Promise((resolve, reject) => {
      const server = createServer((socket) => {
        socket.on('error', () => undefined);
        socket.end(greeting);
      });
      server.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? resolve(null) : reject(e)));
      server.listen(name, () => {
        // The lock must not keep the process alive on its own.
        server.unref();
        resolve({ release: () => new Promise<void>((done) => server.close(() => done())) });
      });
    }),
  ask: (name, ms) =>
    new Promise((resolve) => {
      let text = '';
      const socket = connect(name);
      const timer = setTimeout(() => {
        socket.destroy();
        resolve('timeout');
      }, ms);
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('end', () => {
        clearTimeout(timer);
        resolve(text);
        socket.destroy();
      });
      socket.on('error', () => {
        clearTimeout(timer);
        resolve(null);
      });
    }),
};
