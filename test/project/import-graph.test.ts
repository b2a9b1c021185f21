// The import graph of the server (src/, routes/, storage/, pty/): no circle, type-only imports
// included (a type that lives in an implementation file is what draws them), and no arrow that
// points up a layer. Contract types live in their own modules (hub/types.ts, storage/db.ts,
// protocol/) so that every arrow can point down.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

/**
 * Layers, lowest first: a file may import its own layer and the ones below, never one above.
 * The first pattern a path matches names its layer.
 */
const LAYERS: Array<[string, RegExp]> = [
  ['core', /^src\/core\//],
  // Until ports.ts is split, the Store port's LogEntry is what protocol/output-frame.ts encodes.
  ['contracts', /^src\/(protocol|ports)\//],
  ['services', /^src\/services\/|^pty\/wire\//],
  ['parts', /^src\/(auth|client|recording|shares|host-link|screen)\/|^storage\/|^pty\//],
  ['hub', /^src\/hub\//],
  ['tasks', /^src\/tasks\//],
  ['a2a', /^src\/a2a\//],
  ['routes', /^routes\//],
  ['router', /^src\/router\//],
  ['edges', /^src\/adapter\/|^src\/web\//],
];

function layerOf(rel: string): number {
  const i = LAYERS.findIndex(([, re]) => re.test(rel));
  if (i < 0) throw new Error(`${rel} is in no layer: add it to LAYERS`);
  return i;
}

type Graph = Map<string, string[]>;

function graphOf(files: Record<string, string>): Graph {
  const graph: Graph = new Map();
  for (const [file, text] of Object.entries(files)) {
    const targets = ts
      .preProcessFile(text, true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)))
      .filter((target) => target in files);
    graph.set(file, targets);
  }
  return graph;
}

/** Every import circle, as the files of each strongly connected component (Tarjan). */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

function upwardImports(graph: Graph): string[] {
  const up: string[] = [];
  for (const [file, targets] of graph) {
    for (const t of targets) if (layerOf(t) > layerOf(file)) up.push(`${file} (${LAYERS[layerOf(file)]![0]}) imports ${t} (${LAYERS[layerOf(t)]![0]})`);
  }
  return up;
}

function serverFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const dir of ['src', 'routes', 'storage', 'pty']) {
    for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (f.endsWith('.ts')) files[join(dir, f)] = readFileSync(join(ROOT, dir, f), 'utf8');
    }
  }
  return files;
}

describe('import graph', () => {
  const graph = graphOf(serverFiles());

  it('has no import circle, type-only imports included', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph)).toEqual([]);
  });

  it('has no import pointing up a layer', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('finds a circle through a type-only import, and an upward import', () => {
    const fake = graphOf({
      'src/hub/a.ts': "import { b } from './b.ts';",
      'src/hub/b.ts': "import type { A } from './a.ts';",
      'src/hub/c.ts': "export * from './c.ts';",
      'src/protocol/p.ts': "import type { A } from '../hub/a.ts';",
      'src/tasks/t.ts': "import { a } from '../hub/a.ts';",
    });
    expect(cycles(fake)).toEqual([['src/hub/a.ts', 'src/hub/b.ts'], ['src/hub/c.ts']]);
    expect(upwardImports(fake)).toEqual(['src/protocol/p.ts (contracts) imports src/hub/a.ts (hub)']);
  });
});
