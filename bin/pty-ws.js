#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: no build step between a clone and a running server.
import { register } from 'tsx/esm/api';

register();
await import('../src/adapter/node/main.ts');
