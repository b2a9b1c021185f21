// Packs this checkout and installs the tarball into an empty global prefix, as the README and
// docs/packaging.md say a user does: `npm pack`, then `npm install --global` of the tarball. Used by
// test/project/package.test.ts (the package works, and holds nothing else) and bench/figures/cold-start.ts.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface PackedInstall {
  /** The temp dir holding the tarball, the prefix and a HOME for the installed commands. */
  dir: string;
  tarball: string;
  /** The tarball's file list, as `npm pack --json` reports it. */
  files: string[];
  /** The installed `pty-ws` command (<prefix>/bin/pty-ws) and the installed package's directory. */
  bin: string;
  packageDir: string;
  packMs: number;
  installMs: number;
  remove(): void;
}

/** `npm pack` (its prepack compiles dist/), then `npm install --global --prefix <tmp>` of the tarball. */
export async function packAndInstall(): Promise<PackedInstall> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-ws-package-'));
  const prefix = join(dir, 'prefix');
  mkdirSync(join(dir, 'home'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    let t0 = performance.now();
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, env: npmEnv(), maxBuffer: 16 << 20 });
    const packMs = performance.now() - t0;
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const tarball = join(dir, info!.filename);
    t0 = performance.now();
    // From the tarball's directory with a HOME of its own: nothing of the checkout is in reach.
    // --prefer-offline takes what `npm ci` left in the npm cache; node-pty compiles here (its
    // install script is the one allowed).
    await run('npm', ['install', '--global', '--prefix', prefix, '--allow-scripts=node-pty', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: dir,
      env: npmEnv(),
      maxBuffer: 16 << 20,
    });
    const installMs = performance.now() - t0;
    return {
      dir,
      tarball,
      files: info!.files.map((f) => f.path),
      bin: join(prefix, 'bin', 'pty-ws'),
      packageDir: join(prefix, 'lib', 'node_modules', 'pty-ws'),
      packMs,
      installMs,
      remove,
    };
  } catch (e) {
    remove();
    throw e;
  }
}

/**
 * This environment without what an enclosing `npm run` exported about the checkout (its path in
 * npm_config_local_prefix and INIT_CWD, its package.json in npm_package_*); the user's own npm
 * settings (registry, cache) stay.
 */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|INIT_CWD$)/i.test(k)));
}
