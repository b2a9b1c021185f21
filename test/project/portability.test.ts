// The router core runs on Node and Deno (and is what a Workers port would reuse): no file of it
// may reach a Node-only module, directly or through a relative import into an adapter (which the
// ESLint rule, seeing one file's specifiers at a time, cannot tell), and the Deno import map must
// name every package the Deno router loads. Which files are the portable core is layout.json's to
// say, for this test and for ESLint alike.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { isPortable, isRuntimeShared, LAYOUT, ROOT, tsFilesUnder } from '../helpers/layout.ts';

/** Packages that only run on Node (besides Node's own modules). */
const NODE_ONLY_PACKAGES = ['ws', 'node-pty', '@hono/node-server', '@hono/node-ws', 'tsx'];

function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function isNodeOnly(spec: string): boolean {
  const name = packageName(spec);
  return spec.startsWith('node:') || builtinModules.includes(name) || NODE_ONLY_PACKAGES.includes(name);
}

interface Graph {
  /** Bare package names, each with the first file that imports it. */
  packages: Map<string, string>;
  problems: string[];
}

/**
 * Follows every import (type-only and dynamic ones too) from `entries`. `allowed` says which files
 * the walk may enter; an import of any other file, or of a Node-only module, is a problem.
 */
function walk(entries: string[], allowed: (rel: string) => boolean, read: (file: string) => string = (f) => readFileSync(f, 'utf8'), root = ROOT): Graph {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const problems: string[] = [];
  const queue = entries.map((e) => resolve(root, e));
  for (let file = queue.shift(); file; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const from = relative(root, file);
    for (const { fileName: spec } of ts.preProcessFile(read(file), true, true).importedFiles) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (allowed(relative(root, target))) queue.push(target);
        else problems.push(`${from} imports ${spec}: outside the portable core`);
      } else if (isNodeOnly(spec)) {
        problems.push(`${from} imports ${spec}: Node-only`);
      } else if (!packages.has(packageName(spec))) {
        packages.set(packageName(spec), from);
      }
    }
  }
  return { packages, problems };
}

/** Every file layout.json declares portable (its globs' top folders, walked). */
const portableFiles = [...new Set(LAYOUT.portable.files.map((g) => g.split('/')[0]!))].flatMap(tsFilesUnder).filter(isPortable);


describe('portability', () => {
  it('no file of the portable core reaches a Node-only module, directly or through an adapter', () => {
    expect(portableFiles).toContain('src/router/router.ts');
    expect(portableFiles).toContain('pty/wire/protocol.ts');
    expect(portableFiles).not.toContain('src/adapter/prometheus.ts');
    expect(walk(portableFiles, isPortable).problems).toEqual([]);
  });

  it('the core the runtimes serve depends on these packages only', () => {
    // The core as the adapters use it: every portable file an adapter imports, and what those import.
    const adapterFiles = tsFilesUnder('src/adapter');
    const roots = new Set<string>();
    for (const file of adapterFiles) {
      for (const { fileName: spec } of ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true).importedFiles) {
        const rel = relative(ROOT, resolve(ROOT, dirname(file), spec));
        if (spec.startsWith('.') && isPortable(rel)) roots.add(rel);
      }
    }
    expect(roots).toContain('src/router/router.ts');
    const { packages, problems } = walk([...roots], isPortable);
    expect(problems).toEqual([]);
    // A new dependency of the core belongs in this list only once it runs on Deno (add it to
    // deno.json's import map) and wrangler-notes.md says what it means for Workers.
    expect([...packages.keys()].sort()).toEqual(['@libsql/client', '@xterm/addon-serialize', '@xterm/addon-unicode11', '@xterm/headless', 'drizzle-orm', 'hono', 'jose', 'valibot']);
  });

  it("deno.json's import map names every package the Deno router imports, and the Deno adapter imports nothing of Node", () => {
    const denoAdapter = (rel: string) => isPortable(rel) || isRuntimeShared(rel) || rel.startsWith('src/adapter/deno/');
    const { packages, problems } = walk(['src/adapter/deno/main.ts'], denoAdapter);
    expect(problems).toEqual([]);
    const imports = Object.keys((JSON.parse(readFileSync(join(ROOT, 'deno.json'), 'utf8')) as { imports: Record<string, string> }).imports);
    const missing = [...packages].filter(([name]) => !imports.includes(name)).map(([name, from]) => `${name} (imported by ${from})`);
    expect(missing).toEqual([]);
  });

  it("ESLint's portable rules cover exactly the files layout.json declares portable or shared by the adapters", async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const differ: string[] = [];
    for (const file of ['src', 'routes', 'storage', 'pty'].flatMap(tsFilesUnder)) {
      const config = (await eslint.calculateConfigForFile(join(ROOT, file))) as { rules?: Record<string, unknown[]> };
      const linted = JSON.stringify(config.rules?.['no-restricted-globals'] ?? []).includes('"name":"Deno"');
      if (linted !== (isPortable(file) || isRuntimeShared(file))) differ.push(`${file}: ESLint ${linted ? 'does' : 'does not'} lint it as portable`);
    }
    expect(differ).toEqual([]);
  }, 60_000);

  it('catches a Node import, a Node-only package and a relative import into the Node adapter', () => {
    const fake: Record<string, string> = {
      '/x/src/a.ts': "import { b } from './b.ts';\nimport type { C } from './c.ts';\nexport const a = b;",
      '/x/src/b.ts': "import { readFileSync } from 'node:fs';\nimport os from 'os';\nexport const b = () => import('ws');",
      '/x/src/c.ts': "export { startServer } from './adapter/node/server.ts';\nimport * as v from 'valibot';",
    };
    const { packages, problems } = walk(['src/a.ts'], isPortable, (f) => fake[f] ?? '', '/x');
    expect(problems).toEqual([
      'src/b.ts imports node:fs: Node-only',
      'src/b.ts imports os: Node-only',
      'src/b.ts imports ws: Node-only',
      'src/c.ts imports ./adapter/node/server.ts: outside the portable core',
    ]);
    expect([...packages.keys()]).toEqual(['valibot']);
  });
});
