// Files in a session's working directory (routes/files.ts SessionFiles), on Node: never through a
// symlink at the name (O_NOFOLLOW), never replacing a file (O_EXCL), created 0600.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionFiles } from '../../../routes/deps.ts';

const codeError = (code: string, message: string) => Object.assign(new Error(message), { code });

export const nodeSessionFiles: SessionFiles = {
  async write(dir, name, bytes) {
    const file = await open(join(dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await file.writeFile(bytes);
    } finally {
      await file.close();
    }
  },
  async read(dir, name, maxBytes) {
    const file = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await file.stat();
      if (!info.isFile()) throw codeError('EISDIR', `${name} is not a regular file`);
      if (info.size > maxBytes) throw codeError('EFBIG', `${name} is larger than ${maxBytes} bytes`);
      return new Uint8Array(await file.readFile());
    } finally {
      await file.close();
    }
  },
};
