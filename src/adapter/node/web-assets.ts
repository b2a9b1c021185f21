// The web terminal bundle on Node. From a clone, esbuild bundles src/web/ (xterm.js, the client
// library, the page script and styles) in memory on the first request for it: no build step between
// `npm ci` and `npm start`, nothing written to disk. The package ships the same bundle prebuilt at
// `npm pack` (scripts/build.ts, docs/packaging.md), so an install needs no esbuild. Never a CDN.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import type { WebAssets } from '../../../routes/deps.ts';
import type { Logger } from '../../ports/logger.ts';
import { prebuiltWebDir } from './package-files.ts';

type Files = Map<string, { body: Uint8Array; contentType: string }>;

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** The page's bundle, the same in memory (sources) and on disk (the package): terminal.js and terminal.css. */
export function webBuildOptions(): BuildOptions {
  return {
    entryPoints: { terminal: fileURLToPath(new URL('../../web/main.ts', import.meta.url)) },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    logLevel: 'silent',
  };
}

export function bundledWebAssets(logger: Logger): WebAssets {
  const dir = prebuiltWebDir();
  let built: Promise<Files> | null = null;
  return {
    async get(name) {
      built ??= (dir === null ? bundle(logger) : readPrebuilt(dir)).catch((e: unknown) => {
        // A failed build is retried on the next request (e.g. after esbuild gets installed).
        built = null;
        throw e;
      });
      return (await built).get(name);
    },
  };
}

const file = (name: string, body: Uint8Array) => ({ body, contentType: TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream' });

async function readPrebuilt(dir: string): Promise<Files> {
  const files: Files = new Map();
  for (const name of await readdir(dir)) files.set(name, file(name, await readFile(join(dir, name))));
  return files;
}

async function bundle(logger: Logger): Promise<Files> {
  const started = Date.now();
  // esbuild is a devDependency: an install without it serves the API and says why the page is missing.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({ ...webBuildOptions(), write: false, outdir: 'assets' });
  const files: Files = new Map();
  for (const f of result.outputFiles) files.set(basename(f.path), file(basename(f.path), f.contents));
  logger.log('info', 'web terminal bundled', { ms: Date.now() - started, files: [...files.keys()], bytes: [...files.values()].reduce((n, f) => n + f.body.byteLength, 0) });
  return files;
}
