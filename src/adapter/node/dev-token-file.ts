// The dev token's file in the state directory (src/auth/dev-token.ts), on Node.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEV_TOKEN_FILE, type DevTokenFile } from '../../auth/dev-token.ts';

export function nodeDevTokenFile(stateDir: string): DevTokenFile {
  const dir = resolve(stateDir);
  const path = join(dir, DEV_TOKEN_FILE);
  return {
    path,
    read() {
      try {
        return readFileSync(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
    write(text) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // A reader (a running server) sees the old file or the new one, never half of it.
      const temp = `${path}.${process.pid}.tmp`;
      writeFileSync(temp, text, { mode: 0o600, flag: 'w' });
      renameSync(temp, path);
    },
  };
}
