// Where the files the Node adapter starts by path are: the PTY host's entry, the worker threads'
// entries and the prebuilt web page. From a clone they are TypeScript sources run through tsx
// (`--import tsx`, or a boot file registering it inside the worker); in the installed package they
// are bundles that scripts/build.ts compiled side by side into dist/, the very directory this
// module's own code is bundled into. docs/packaging.md.
import { fileURLToPath } from 'node:url';

/** True when running compiled from dist/ (the package), false from the TypeScript sources. */
export function compiled(): boolean {
  return import.meta.url.endsWith('.js');
}

/** The PTY host process: the node arguments that start it and the directory to start it in. */
export function ptyHostEntry(): { nodeArgs: string[]; cwd: string } {
  if (compiled()) return { nodeArgs: [fileURLToPath(new URL('./pty-host.js', import.meta.url))], cwd: fileURLToPath(new URL('..', import.meta.url)) };
  // `--import tsx` resolves from the cwd, so it runs where this package's node_modules are.
  return { nodeArgs: ['--import', 'tsx', fileURLToPath(new URL('./pty-host-main.ts', import.meta.url))], cwd: fileURLToPath(new URL('../../..', import.meta.url)) };
}

/** A worker thread's entry module (screen-worker.ts, log-commit-worker.ts). */
export function workerEntry(name: 'screen-worker' | 'log-commit-worker'): URL {
  return compiled() ? new URL(`./${name}.js`, import.meta.url) : new URL(`./${name}-boot.mjs`, import.meta.url);
}

/** The directory of the web page's prebuilt files, or null from sources (bundled on first request). */
export function prebuiltWebDir(): string | null {
  return compiled() ? fileURLToPath(new URL('./web/', import.meta.url)) : null;
}
