// The dev token's file in the state directory (src/auth/dev-token.ts), on Deno.
import { DEV_TOKEN_FILE, type DevTokenFile } from '../../auth/dev-token.ts';
import { absolute } from './io.ts';

export function denoDevTokenFile(stateDir: string): DevTokenFile {
  const dir = absolute(stateDir);
  const path = `${dir}/${DEV_TOKEN_FILE}`;
  return {
    path,
    read() {
      try {
        return Deno.readTextFileSync(path);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      }
    },
    write(text) {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
      // A reader (a running server) sees the old file or the new one, never half of it.
      const temp = `${path}.${Deno.pid}.tmp`;
      Deno.writeTextFileSync(temp, text, { mode: 0o600 });
      Deno.renameSync(temp, path);
    },
  };
}
