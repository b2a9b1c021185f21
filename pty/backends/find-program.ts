// Finding a program the way the host's backends look for theirs: the first executable on a PATH.

import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';

/** The first executable `name` in the absolute directories of `searchPath`, or undefined. */
export async function findProgram(name: string, searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(':').filter((d) => path.isAbsolute(d))) {
    const file = path.join(dir, name);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}
