// The page's ReplayGate on a real xterm.js (headless: the same parser and write queue, the same
// answers to DA, CPR and DECRQM): answers to queries in replayed bytes are dropped, answers to
// live ones pass, whatever the order the writes queue up in.
import xterm from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { ReplayGate } from '../../src/web/replay-gate.ts';

function gated(): { term: InstanceType<typeof xterm.Terminal>; gate: ReplayGate; sent: string[]; parsed: () => Promise<void> } {
  const term = new xterm.Terminal({ cols: 80, rows: 24, allowProposedApi: true });
  const gate = new ReplayGate(term);
  const sent: string[] = [];
  term.onData((d) => {
    if (gate.open) sent.push(d);
  });
  return { term, gate, sent, parsed: () => new Promise<void>((resolve) => term.write('', resolve)) };
}

describe('ReplayGate', () => {
  it('drops the answers to replayed queries and keeps those to live ones, in order', async () => {
    const { gate, sent, parsed } = gated();
    // A scrollback replay, a live query behind it, a Keyframe mid-session (lag recovery), live again:
    // all queued before xterm.js parses any of them.
    gate.write('old \x1b[>c \x1b[6n \x1b[?2004$p', true);
    gate.write('live \x1b[c', false);
    gate.write('\x1b[H\x1b[2Jsnapshot \x1b[>c', true);
    gate.write('\x1b[5;3Hlive \x1b[6n', false);
    expect(gate.open).toBe(false);
    await parsed();
    expect(sent).toEqual(['\x1b[?1;2c', '\x1b[5;8R']);
    expect(gate.open).toBe(true);
  });

  it('is open between writes, so keys typed then are sent', async () => {
    const { term, gate, sent, parsed } = gated();
    gate.write('replayed \x1b[>c', true);
    await parsed();
    term.input('typed');
    gate.write('live \x1b[>c', false);
    await parsed();
    expect(sent).toEqual(['typed', '\x1b[>0;276;0c']);
  });

  it('covers a write parsed at once, within write()', () => {
    // A write right after a keystroke is parsed within `write` (xterm.js's input-latency path).
    const { term, gate, sent } = gated();
    term.input('k');
    gate.write('\x1b[>c', true);
    expect(sent).toEqual(['k']);
    expect(gate.open).toBe(true);
  });
});
