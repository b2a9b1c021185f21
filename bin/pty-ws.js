#!/usr/bin/env node
// The clone's `pty-ws` (npm start): runs the TypeScript sources through tsx, no build step between a
// clone and a running server. The installed package's `pty-ws` is dist/cli.js, compiled at `npm pack`
// (scripts/build.ts); this file is not shipped.
import { register } from 'tsx/esm/api';

register();
await import('../src/adapter/node/main.ts');
