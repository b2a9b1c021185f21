#!/usr/bin/env node
// `pty-ws`. In a clone (`npm start`, `npx pty-ws`) it runs the TypeScript sources through tsx: no
// build step between a clone and a running server, and never a stale build. The installed package
// ships no sources: there it runs dist/cli.js, compiled at `npm pack` (docs/packaging.md).
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const sources = new URL('../src/adapter/node/cli/main.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  await import('../dist/cli.js');
}
