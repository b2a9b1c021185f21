import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { URL } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Node's own modules (with and without `node:`) and the packages that only run on Node.
const nodeOnlyNames = [...builtinModules, 'ws', 'node-pty', '@hono/node-server', '@hono/node-ws', 'tsx'];
const nodeOnlyImports = (message) => ({
  paths: nodeOnlyNames.map((name) => ({ name, message })),
  patterns: [{ group: ['node:*', '@hono/node-server/*', 'tsx/*', ...builtinModules.map((m) => `${m}/*`)], message }],
});
const nodeGlobals = (message) => ['process', 'Buffer', 'require', '__dirname', '__filename'].map((name) => ({ name, message }));

// Which files are portable is declared once, in layout.json (test/project/portability.test.ts reads it too).
const layout = JSON.parse(readFileSync(new URL('./layout.json', import.meta.url), 'utf8'));

const portable = 'The portable core imports no Node-only API: put this in src/adapter/node/ (or src/adapter/deno/).';
const deno = 'The Deno adapter uses Deno APIs, not Node ones.';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.pty-ws/**', '.deno/**', 'storage/migrations/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // The portable core, and the parts both adapters share: neither Node's API nor Deno's.
  ...[layout.portable, layout.runtimeShared].map(({ files, ignores = [] }) => ({
    files,
    ignores,
    rules: {
      'no-restricted-imports': ['error', nodeOnlyImports(portable)],
      'no-restricted-globals': ['error', ...nodeGlobals(portable), { name: 'Deno', message: 'The portable core uses no Deno API: put this in src/adapter/deno/.' }],
    },
  })),
  {
    files: ['src/adapter/deno/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { ...nodeOnlyImports(deno), patterns: [...nodeOnlyImports(deno).patterns, { group: ['../node/*'], message: deno }] }],
      'no-restricted-globals': ['error', ...nodeGlobals(deno)],
    },
  },
);
