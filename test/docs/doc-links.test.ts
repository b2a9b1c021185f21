// Every relative link in README.md and docs/*.md leads somewhere: the file (or directory) exists,
// and a `#fragment` names a heading of the target as GitHub renders it, so moving a section or
// renaming a heading cannot leave a dead link behind. Headings are slugged as GitHub does it
// (github-slugger's rules, written out here: lower case, punctuation dropped, spaces to hyphens,
// a repeated slug numbered -1, -2, …).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/** GitHub's anchor for a heading's rendered text (before de-duplication). */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as rendered: inline code, emphasis, links and HTML reduced to their text. */
function rendered(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .trim();
}

/** The lines of `text` outside fenced code blocks, with their 1-based numbers. */
function prose(text: string): Array<{ line: string; no: number }> {
  const out: Array<{ line: string; no: number }> = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) fence = fence === null ? marker : null;
    else if (fence === null) out.push({ line, no: i + 1 });
  });
  return out;
}

/** Every anchor a Markdown file offers: its headings' slugs (numbered when repeated) and explicit ids. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of prose(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(rendered(heading));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

/** The link targets of a Markdown text outside code: inline links and images, and reference definitions. */
function links(text: string): Array<{ target: string; line: number }> {
  const out: Array<{ target: string; line: number }> = [];
  for (const { line, no } of prose(text)) {
    const code = line.replace(/`[^`]*`/g, '');
    for (const m of code.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line: no });
    const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(code);
    if (def) out.push({ target: def[1]!, line: no });
  }
  return out;
}

/** What is wrong with each relative link of `file` (a path under ROOT), as `file:line: target: why`. */
function brokenLinks(file: string): string[] {
  const abs = join(ROOT, file);
  const text = readFileSync(abs, 'utf8');
  const broken: string[] = [];
  for (const { target, line } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: …
    const [path, fragment] = target.split('#', 2) as [string, string | undefined];
    const dest = path === '' ? abs : resolve(dirname(abs), decodeURIComponent(path));
    const where = `${file}:${line}: ${target}`;
    if (!existsSync(dest)) {
      broken.push(`${where}: no such file ${relative(ROOT, dest)}`);
      continue;
    }
    if (fragment === undefined || fragment === '') continue;
    if (statSync(dest).isDirectory() || !dest.endsWith('.md')) {
      broken.push(`${where}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!anchors(readFileSync(dest, 'utf8')).has(decodeURIComponent(fragment))) broken.push(`${where}: ${relative(ROOT, dest)} has no heading "#${fragment}"`);
  }
  return broken;
}

const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('documentation links', () => {
  it('slugs headings as GitHub does', () => {
    const text = [
      '# The pty-ws wire protocol',
      '### 3.4 After a crash (DECISIONS §18)',
      '### `pty-ws attach`',
      "## Endpoints (listed in the AgentCard's `supportedInterfaces`, in this order)",
      '## Tasks (for agent authors)',
      '## Tasks (for agent authors)',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n');
    expect([...anchors(text)]).toEqual([
      'the-pty-ws-wire-protocol',
      '34-after-a-crash-decisions-18',
      'pty-ws-attach',
      'endpoints-listed-in-the-agentcards-supportedinterfaces-in-this-order',
      'tasks-for-agent-authors',
      'tasks-for-agent-authors-1',
    ]);
  });

  it('finds links outside code only', () => {
    const text = ['[a](x.md#y) and ![b](img.png "t")', '`[c](not-a-link.md)`', '```', '[d](in-code.md)', '```', '[e]: ref.md'].join('\n');
    expect(links(text)).toEqual([
      { target: 'x.md#y', line: 1 },
      { target: 'img.png', line: 1 },
      { target: 'ref.md', line: 6 },
    ]);
  });

  it('every relative link in README.md and docs/*.md resolves, anchors included', () => {
    expect(FILES.length).toBeGreaterThan(10);
    expect(FILES.flatMap(brokenLinks)).toEqual([]);
  });
});
