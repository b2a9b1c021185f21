// The import graph of the server (src/, routes/, storage/, pty/): no circle, type-only imports
// included (a type that lives in an implementation file is what draws them); each folder is one
// layer or one subsystem of one, as layout.json declares them, lowest first: no arrow points up a
// layer and no two folders import each other. Contract types live in their own modules (ports/,
// hub/types.ts, storage/db.ts, protocol/) so that every arrow can point down.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { LAYOUT, ROOT, tsFilesUnder } from '../helpers/layout.ts';

/** Folder → its layer's index in layout.json (lowest first). */
const LAYER_OF = new Map(LAYOUT.layers.flatMap(({ folders }, i) => folders.map((f) => [f, i] as const)));

function layerOf(rel: string): number {
  const i = LAYER_OF.get(dirname(rel));
  if (i === undefined) throw new Error(`${dirname(rel)}/ is in no layer: add it to layout.json`);
  return i;
}

const layerName = (rel: string) => LAYOUT.layers[layerOf(rel)]!.name;

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
    for (const t of targets) if (layerOf(t) > layerOf(file)) up.push(`${file} (${layerName(file)}) imports ${t} (${layerName(t)})`);
  }
  return up;
}

/** The folders' graph: an arrow from each folder to every other folder one of its files imports. */
function folderGraph(graph: Graph): Graph {
  const folders: Graph = new Map();
  for (const [file, targets] of graph) {
    const from = dirname(file);
    const to = new Set(folders.get(from) ?? []);
    for (const t of targets) if (dirname(t) !== from) to.add(dirname(t));
    folders.set(from, [...to].sort());
  }
  return folders;
}

/** Each pair of folders that import each other, with one file import each way. */
function twoWayFolders(graph: Graph): string[] {
  const pairs: string[] = [];
  const example = (from: string, to: string) => {
    for (const [file, targets] of graph) if (dirname(file) === from) for (const t of targets) if (dirname(t) === to) return `${file} imports ${t}`;
    return '';
  };
  const folders = folderGraph(graph);
  for (const [a, targets] of folders) {
    for (const b of targets) if (a < b && folders.get(b)?.includes(a)) pairs.push(`${a}/ and ${b}/ import each other: ${example(a, b)}; ${example(b, a)}`);
  }
  return pairs;
}

function serverFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const file of ['src', 'routes', 'storage', 'pty'].flatMap(tsFilesUnder)) files[file] = readFileSync(join(ROOT, file), 'utf8');
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

  it('has no two folders that import each other, and no circle of folders', () => {
    expect(twoWayFolders(graph)).toEqual([]);
    expect(cycles(folderGraph(graph))).toEqual([]);
  });

  it('declares every folder in layout.json, and no folder twice', () => {
    const declared = LAYOUT.layers.flatMap(({ folders }) => folders);
    expect(declared.length).toBe(new Set(declared).size);
    expect([...new Set([...graph.keys()].map((f) => dirname(f)))].filter((d) => !LAYER_OF.has(d))).toEqual([]);
  });

  it('finds a circle through a type-only import, an upward import and two folders importing each other', () => {
    const fake = graphOf({
      'src/hub/a.ts': "import { b } from './b.ts';",
      'src/hub/b.ts': "import type { A } from './a.ts';",
      'src/hub/c.ts': "export * from './c.ts';",
      'src/protocol/p.ts': "import type { A } from '../hub/a.ts';",
      'src/tasks/t.ts': "import { a } from '../hub/a.ts';",
      'src/auth/x.ts': "import { y } from '../shares/y.ts';",
      'src/shares/y.ts': 'export const y = 1;',
      'src/shares/z.ts': "import type { W } from '../auth/w.ts';",
      'src/auth/w.ts': 'export type W = 1;',
    });
    expect(cycles(fake)).toEqual([['src/hub/a.ts', 'src/hub/b.ts'], ['src/hub/c.ts']]);
    expect(upwardImports(fake)).toEqual(['src/protocol/p.ts (protocol) imports src/hub/a.ts (hub)']);
    expect(twoWayFolders(fake)).toEqual(['src/auth/ and src/shares/ import each other: src/auth/x.ts imports src/shares/y.ts; src/shares/z.ts imports src/auth/w.ts']);
    expect(cycles(folderGraph(fake))).toEqual([['src/auth', 'src/shares']]);
  });
});
