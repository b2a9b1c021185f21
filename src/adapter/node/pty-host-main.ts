// The PTY host process a router starts: `node --import tsx src/adapter/node/pty-host-main.ts --socket <path> ...`
// (dist/pty-host.js in the package). Reads its settings from its arguments and environment
// (pty/wire/host-config.ts) and runs the host (src/adapter/node/pty-host-run.ts); `pty-ws pty-host` does the same.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../core/config.ts';
import { readPtyHostConfig, type PtyHostConfig } from '../../../pty/wire/host-config.ts';
import { runPtyHost } from './pty-host-run.ts';

function configOrExit(): PtyHostConfig {
  try {
    return readPtyHostConfig(process.argv.slice(2), process.env, (p) => path.resolve(p), (file) => readFileSync(file, 'utf8'));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`pty-host: ${e.message}\n`);
    process.exit(2);
  }
}

void runPtyHost(configOrExit());
