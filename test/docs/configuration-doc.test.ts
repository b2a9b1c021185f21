// docs/configuration.md says what src/core/config.ts reads and names every command and flag the CLI
// shows (`pty-ws --help` and each command's own), so a setting or flag added without its
// documentation fails here.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settingsList } from '../../src/core/config.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const BIN = `${ROOT}bin/pty-ws.js`;
const DOC = readFileSync(`${ROOT}docs/configuration.md`, 'utf8');

/** The rows of every table of `text` whose header begins `| env var |`, as cells. */
function settingRows(text: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('| env var |')) inTable = true;
    else if (!line.startsWith('|')) inTable = false;
    else if (inTable && !/^\|[-| ]+\|$/.test(line)) rows.push(line.slice(1, -1).split('|').map((c) => c.trim()));
  }
  return rows;
}

const section = (text: string, heading: string): string => {
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`no "${heading}" in docs/configuration.md`);
  const next = text.indexOf('\n## ', start + heading.length);
  return text.slice(start, next < 0 ? undefined : next);
};

function cli(...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/nonexistent' }, timeout: 30_000 });
  return r.stdout + r.stderr;
}

describe('docs/configuration.md: server settings', () => {
  const rows = settingRows(section(DOC, '## Server settings'));

  it('has one row per setting of src/core/config.ts, and none other', () => {
    expect(rows.map((r) => r[0]!.replace(/`/g, '')).sort()).toEqual(settingsList().map((s) => s.env).sort());
  });

  it('gives each its flag and, where it is fixed, its default', () => {
    for (const s of settingsList()) {
      const row = rows.find((r) => r[0] === `\`${s.env}\``)!;
      expect(row[1], s.env).toBe(`\`${s.flag}\``);
      if (s.default !== null) expect(row[2], s.env).toBe(`\`${s.default}\``);
      else expect(row[2], s.env).not.toBe('');
    }
  });
});

describe('docs/configuration.md: commands', () => {
  const help = cli('--help');
  const commandsPart = help.slice(help.indexOf('commands:'), help.indexOf('settings ('));
  // Each command's entry: its line, and the indented lines under it.
  const entries = new Map<string, string>();
  let current = '';
  for (const l of commandsPart.split('\n')) {
    const name = /^ {2}([a-z][a-z-]*)\b/.exec(l)?.[1];
    if (name) entries.set((current = name), l);
    else if (current && /^ {3,}/.test(l)) entries.set(current, `${entries.get(current)!}\n${l}`);
  }
  const commands = [...entries.keys()];
  const docCommands = section(DOC, '## Commands');

  it('pty-ws --help lists the commands it has', () => {
    expect(commands).toEqual(expect.arrayContaining(['start', 'serve', 'pty-host', 'host', 'attach', 'sessions', 'token', 'share', 'nginx-config']));
  });

  it.each(['start', 'serve', 'pty-host', 'host', 'attach', 'sessions', 'token', 'share', 'nginx-config'])('documents `pty-ws %s` and every flag its help shows', (command) => {
    expect(commands).toContain(command);
    const own = section(docCommands, `### \`pty-ws ${command}\``).split('\n### ')[0]!;
    // The command's entry in `pty-ws --help`, and its own --help where it has one (not the general usage).
    const line = entries.get(command)!;
    const ownHelp = cli(command, '--help');
    const flags = new Set([...`${line}\n${ownHelp.startsWith('usage: pty-ws <command>') ? '' : ownHelp}`.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]).filter((f) => f !== '--help'));
    for (const flag of flags) {
      // The client settings' flags are documented once, in their own table.
      if (['--url', '--token', '--instance'].includes(flag)) expect(section(DOC, '## Client settings'), flag).toContain(`\`${flag}\``);
      else expect(own, `${command} ${flag}`).toContain(flag);
    }
  });
});
