// The web terminal bundle on Node: esbuild bundles src/web/ (xterm.js, the client library, the page
// script and styles) in memory on the first request for it. No build step between `npm ci` and
// `npm start`, nothing written to disk, nothing fetched from a CDN.
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WebAssets } from '../../../routes/deps.ts';
import type { Logger } from '../../ports.ts';

const ENTRY = fileURLToPath(new URL('../../web/main.ts', import.meta.url));
const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

export function bundledWebAssets(logger: Logger): WebAssets {
  let built: Promise<Map<string, { body: Uint8Array; contentType: string }>> | null = null;
  return {
    async get(name) {
      built ??= bundle(logger).catch((e: unknown) => {
        // A failed build is retried on the next request (e.g. after esbuild gets installed).
        built = null;
        throw e;
      });
      return (await built).get(name);
    },
  };
}

async function bundle(logger: Logger): Promise<Map<string, { body: Uint8Array; contentType: string }>> {
  const started = Date.now();
  // esbuild is a devDependency: an install without it serves the API and says why the page is missing.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: { terminal: ENTRY },
    bundle: true,
    write: false,
    outdir: 'assets',
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    logLevel: 'silent',
  });
  const files = new Map<string, { body: Uint8Array; contentType: string }>();
  for (const f of result.outputFiles) {
    const name = basename(f.path);
    files.set(name, { body: f.contents, contentType: TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream' });
  }
  logger.log('info', 'web terminal bundled', { ms: Date.now() - started, files: [...files.keys()], bytes: [...files.values()].reduce((n, f) => n + f.body.byteLength, 0) });
  return files;
}
