import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const message = 'The portable core imports no Node-only API: put this in src/adapter/node/.';
const nodeOnly = {
  paths: ['ws', 'node-pty', '@hono/node-server', '@hono/node-ws', 'fs', 'fs/promises', 'net', 'path', 'os', 'child_process', 'http', 'https', 'url', 'util', 'events', 'stream', 'buffer', 'process'].map((name) => ({ name, message })),
  patterns: [{ group: ['node:*', '@hono/node-server/*'], message }],
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.pty-ws/**', 'storage/migrations/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts', 'routes/**/*.ts', 'storage/**/*.ts'],
    ignores: ['src/adapter/node/**', 'src/adapter/deno/**'],
    rules: { 'no-restricted-imports': ['error', nodeOnly] },
  },
);
