// The error and close-code tables of docs/protocol.md (§7.1, §7.2) say what the code does: each is
// read here and compared with the code's own tables (ERROR_TABLE in src/protocol/errors.ts, CLOSE in
// src/protocol/close-codes.ts), so neither can drift.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_TABLE, type BindingCode } from '../../src/protocol/errors.ts';
import { CLOSE } from '../../src/protocol/close-codes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const DOCS = { 'docs/protocol.md': readFileSync(`${ROOT}docs/protocol.md`, 'utf8') };

/** The rows (cells, trimmed) of the first table whose header's first cell is `first` and that has a column `column`. */
function table(text: string, first: string, column: RegExp): string[][] {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const header = cells(lines[i]!);
    if (header[0] !== first || !header.some((h) => column.test(h)) || !/^\|[-| ]+\|$/.test(lines[i + 1] ?? '')) continue;
    const rows: string[][] = [header];
    for (let j = i + 2; lines[j]?.startsWith('|'); j++) rows.push(cells(lines[j]!));
    return rows;
  }
  throw new Error(`no table with a "${first}" column and ${column}`);
}

function cells(line: string): string[] {
  if (!line.startsWith('|')) return [];
  return line
    .slice(1, line.endsWith('|') ? -1 : undefined)
    .split('|')
    .map((c) => c.trim());
}

const number = (cell: string): number => Number(/[−-]?\d+/.exec(cell)![0].replace('−', '-'));

describe.each(Object.entries(DOCS))('%s', (_name, text) => {
  it("the error table is ERROR_TABLE: every binding code once, with its A2A code, HTTP status and close code", () => {
    const [header, ...rows] = table(text, 'code', /^HTTP$/);
    const col = (re: RegExp) => header!.findIndex((h) => re.test(h));
    const [a2a, http, close] = [col(/^A2A/), col(/^HTTP$/), col(/^close/)];
    const documented = Object.fromEntries(rows.map((r) => [r[0]!.replace(/`/g, ''), { a2aCode: number(r[a2a]!), http: number(r[http]!), close: number(r[close]!) }]));
    const expected = Object.fromEntries(Object.entries(ERROR_TABLE).map(([code, info]) => [code, { a2aCode: info.a2aCode, http: info.http, close: info.close }]));
    expect(documented).toEqual(expected);
  });

  it('the close-code table lists every close code the server sends, and no other', () => {
    const [, ...rows] = table(text, 'close', /^when$/);
    const documented = rows.map((r) => number(r[0]!));
    const sent = new Set<number>([...Object.values(CLOSE), ...Object.values(ERROR_TABLE).map((i) => i.close)]);
    expect([...documented].sort()).toEqual([...sent].sort());
    expect(new Set(documented).size).toBe(documented.length);
    // The reaped connection's row says so, with the code the adapters use.
    const reaped = rows.find((r) => /Ping/.test(r[1]!));
    expect(reaped && number(reaped[0]!)).toBe(CLOSE.reaped);
    for (const code of Object.keys(ERROR_TABLE) as BindingCode[]) {
      if (ERROR_TABLE[code].close === CLOSE.reaped) expect(reaped![1]).toContain(code);
    }
  });
});
