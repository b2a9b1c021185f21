// `npm run build` (and `npm pack`'s prepack): compiles what the installed package runs into dist/,
// so no TypeScript loader runs in production. docs/packaging.md lists what goes where and why.
//   dist/cli.js                the `pty-ws` command (src/adapter/node/cli/main.ts)
//   dist/pty-host.js           the PTY host process (src/adapter/node/pty-host-main.ts)
//   dist/screen-worker.js      worker threads (src/adapter/node/*-worker.ts)
//   dist/log-commit-worker.js
//   dist/chunk-*.js            code those share
//   dist/web/terminal.{js,css} the web page, bundled now instead of on its first request
//   dist/migrations/           the drizzle migrations storage/migrate.ts looks for next to itself
// Dependencies stay external (installed next to the package); node-pty compiles at install.
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { webBuildOptions } from '../src/adapter/node/web-assets.ts';

const root = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const dist = root('dist');

async function build(): Promise<void> {
  rmSync(dist, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: {
      cli: root('src/adapter/node/cli/main.ts'),
      'pty-host': root('src/adapter/node/pty-host-main.ts'),
      'screen-worker': root('src/adapter/node/screen-worker.ts'),
      'log-commit-worker': root('src/adapter/node/log-commit-worker.ts'),
    },
    outdir: dist,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  await esbuild.build({ ...webBuildOptions(), outdir: `${dist}/web`, write: true, logLevel: 'warning' });
  mkdirSync(`${dist}/migrations/meta`, { recursive: true });
  // The migrator reads the journal and the .sql files; the snapshots are only drizzle-kit's.
  cpSync(root('storage/migrations/meta/_journal.json'), `${dist}/migrations/meta/_journal.json`);
  cpSync(root('storage/migrations'), `${dist}/migrations`, { recursive: true, filter: (src) => !src.includes('/meta/') && !src.endsWith('/meta') });
}

await build();
