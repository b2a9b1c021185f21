// The write-before-send journal and the sequence ceilings (docs/protocol.md §6.6), over a real
// libSQL file: what a start recovers, when the journal may vouch for its router, and when not.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogJournal, readJournal, type JournalFile } from '../../storage/log-journal.ts';
import { openStore } from '../../storage/open.ts';
import type { LibsqlStore } from '../../storage/store.ts';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import type { SessionRecord } from '../../src/ports/store.ts';
import { OutputFrame, outputEntry } from '../../src/protocol/output-frame.ts';

/** A journal segment in memory, as the file would hold it. */
class MemoryFile implements JournalFile {
  bytes = new Uint8Array(0);
  append(parts: readonly Uint8Array[]): void {
    const size = parts.reduce((n, p) => n + p.length, 0);
    const next = new Uint8Array(this.bytes.length + size);
    next.set(this.bytes);
    let at = this.bytes.length;
    for (const p of parts) {
      next.set(p, at);
      at += p.length;
    }
    this.bytes = next;
  }
  read(): Uint8Array {
    return this.bytes;
  }
  truncate(): void {
    this.bytes = new Uint8Array(0);
  }
  close(): void {}
}

const record = (id: string): SessionRecord => ({
  id,
  instanceId: 'i1',
  backend: 'native',
  sessionClass: 'shell',
  argv: null,
  command: null,
  cwd: null,
  env: {},
  cols: 80,
  rows: 24,
  label: null,
  state: 'running',
  createdAt: new Date(0).toISOString(),
  closedAt: null,
  exitCode: null,
  closeReason: null,
  createdBy: null,
  hadMember: false,
  createdVia: null,
  host: null,
});

const entry = (sessionId: string, sequence: number, text = `out-${sequence}`): LogEntry => ({
  sessionId,
  sequence,
  kind: 'Output',
  createdAt: 1000 + sequence,
  frame: JSON.stringify({ op: 'pty.session_frame', sequence, payload: { kind: 'Output', data: text } }),
  hostEvent: { epoch: 'host-a', n: sequence * 10 },
});

let dir: string;
let files: [MemoryFile, MemoryFile];
const ids = { bootId: 'boot-1', instanceId: 'i1' };

async function open(journalIds = ids): Promise<LibsqlStore> {
  return openStore({ url: `file:${join(dir, 'log.db')}`, journal: new LogJournal(files, journalIds) });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-journal-'));
  files = [new MemoryFile(), new MemoryFile()];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the log journal', () => {
  it('reads back what was written, and stops at a torn last record', () => {
    const journal = new LogJournal(files, ids);
    journal.reset();
    for (let n = 1; n <= 3; n++) journal.append(entry('s1', n, 'ü€ '.repeat(n)));
    const whole = readJournal(files.map((f) => f.read()));
    expect(whole).toMatchObject({ bootId: 'boot-1', instanceId: 'i1' });
    expect(whole.entries).toEqual([1, 2, 3].map((n) => entry('s1', n, 'ü€ '.repeat(n))));
    // The third record cut short, as by a crash in the middle of its write.
    const torn = readJournal([files[0].read().subarray(0, files[0].read().length - 5), files[1].read()]);
    expect(torn.entries.map((e) => e.sequence)).toEqual([1, 2]);
  });

  it('keeps Output as its bytes and frame id, and gives back the very frame that was sent (a JSON record beside it reads as before)', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const sent = new OutputFrame('0190f5a0-0000-7000-8000-000000000001', 1, 1001, bytes);
    const journal = new LogJournal(files, ids);
    journal.reset();
    journal.append(outputEntry('s1', sent, { epoch: 'host-a', n: 10 }));
    journal.append(entry('s1', 2));
    // The bytes themselves are in the file, not their base64.
    expect(Buffer.from(files[0].read()).includes(Buffer.from(bytes))).toBe(true);
    const [output, json] = readJournal(files.map((f) => f.read())).entries;
    expect(output).toMatchObject({ sessionId: 's1', sequence: 1, kind: 'Output', createdAt: 1001, hostEvent: { epoch: 'host-a', n: 10 }, output: { id: sent.id, data: bytes } });
    expect(output!.frame).toBe(sent.json);
    expect(json).toEqual(entry('s1', 2));

    // Recovered into the database, it still reads back as that frame.
    const store = await open();
    await store.createSession(record('s1'));
    expect((await store.recoverJournal(ids)).recovered).toBe(2);
    const [stored] = await store.readLog('s1', 0);
    expect(stored!.frame).toBe(sent.json);
    await store.close();
  });

  it('a start commits the frames the database lacks and, trusting its own journal, numbers on without a hole', async () => {
    let store = await open();
    await store.recoverJournal(ids);
    await store.createSession(record('s1'));
    await store.reserveSequences('s1', 4096);
    for (let n = 1; n <= 5; n++) store.appendLog(entry('s1', n));
    await store.flush();
    // Sent and journaled, never committed: the router is killed here.
    const journal = new LogJournal(files, ids);
    journal.append(entry('s1', 6));
    journal.append(entry('s1', 7));
    await store.close();

    store = await open();
    const recovery = await store.recoverJournal(ids);
    expect(recovery).toMatchObject({ recovered: 2, trusted: true });
    expect(recovery.hostEvents.get('host-a')).toEqual({ s1: 70 });
    expect((await store.readLog('s1', 0)).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await store.sequenceState('s1')).toEqual({ stored: 7, ceiling: 7, skipped: 0 });
    await store.close();
  });

  it('a router killed between recovery and resuming the host: the next start still knows which host events were logged', async () => {
    let store = await open();
    await store.recoverJournal(ids);
    await store.createSession(record('s1'));
    await store.reserveSequences('s1', 4096);
    // Sent and journaled, never committed: the first router is killed here.
    const journal = new LogJournal(files, ids);
    for (let n = 1; n <= 3; n++) journal.append(entry('s1', n));
    await store.close();

    // The second recovers them (and empties the journal), then is killed before it resumes the host.
    store = await open();
    expect((await store.recoverJournal(ids)).hostEvents.get('host-a')).toEqual({ s1: 30 });
    await store.close();

    // The third must still resume the host after event 30, or it logs events 1..30 again.
    store = await open();
    const third = await store.recoverJournal(ids);
    expect(third.recovered).toBe(0);
    expect(third.hostEvents.get('host-a')).toEqual({ s1: 30 });
    expect((await store.readLog('s1', 0)).map((e) => e.sequence)).toEqual([1, 2, 3]);
    await store.close();
  });

  it('a journal of another boot (a power loss) does not vouch: the ceiling stays and the hole is there to declare', async () => {
    let store = await open();
    await store.recoverJournal(ids);
    await store.createSession(record('s1'));
    await store.reserveSequences('s1', 4096);
    for (let n = 1; n <= 5; n++) store.appendLog(entry('s1', n));
    await store.close();

    store = await open({ bootId: 'boot-2', instanceId: 'i1' });
    expect(await store.recoverJournal({ bootId: 'boot-2', instanceId: 'i1' })).toMatchObject({ recovered: 0, trusted: false });
    expect(await store.sequenceState('s1')).toEqual({ stored: 5, ceiling: 4096, skipped: 0 });
    await store.skipSequences('s1', 4096, 4091);
    expect(await store.sequenceState('s1')).toEqual({ stored: 4096, ceiling: 4096, skipped: 4091 });
    await store.close();
  });

  it('frames dropped while the database was down keep their numbers taken across an emptied segment', () => {
    const journal = new LogJournal(files, ids);
    journal.reset();
    const big = 'x'.repeat(300 * 1024);
    const sent = [1, 2, 3, 4, 5].map((n) => entry('s1', n, big));
    for (const e of sent) journal.append(e);
    // Segment 0 filled up with 1-4, so 5 went to segment 1 behind a mark. 1-4 were dropped (never
    // committed): segment 0 is emptied, and the mark still says their numbers were handed out.
    journal.settled(sent.slice(0, 4));
    journal.append(entry('s1', 6, big));
    const found = readJournal(files.map((f) => f.read()));
    expect(files[0].read().length).toBe(0);
    expect(found.entries.map((e) => e.sequence)).toEqual([5, 6]);
    expect(found.marks.get('s1')).toBe(4);
  });
});
