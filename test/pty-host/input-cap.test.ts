// Input a session's program does not read is bounded (docs/protocol.md §7.4, §9.2): the PTY host
// keeps at most PTY_INPUT_CAP_BYTES of a session's input that the kernel has not taken; past it a
// write is refused, the sender hears PTY_WRITE_FAILED (its connection lives on), the host's memory
// does not grow with what is sent, other sessions are not slowed, and once the program reads again
// input flows as before. Against the real router and PTY host.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INPUT_IN_FLIGHT_BYTES, PTY_INPUT_CAP_BYTES } from '../../src/core/flow-budget.ts';
import { TestClient, type Frame } from '../helpers/client.ts';
import { expectNoneLeft } from '../helpers/leftovers.ts';
import { useHost, WAIT } from '../helpers/pty-host.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | undefined;

afterEach(async () => {
  if (!server) return;
  const dir = server.dir;
  await server.stop();
  server = undefined;
  await expectNoneLeft(dir);
});

const MiB = 1024 * 1024;
/** One PW1I frame's input: half the 1 MiB message limit (docs/protocol.md §1.5). */
const FRAME_BYTES = MiB / 2;
/** Far more than the cap: without it the host would keep (and copy) all of it. */
const SENT_BYTES = 128 * MiB;

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  if (!line) throw new Error(`no VmRSS for ${pid}`);
  return Number(line[1]) * 1024;
}

const pw1i = (data: Buffer): Buffer => Buffer.concat([Buffer.from('PW1I'), data]);
const writeFailures = (c: TestClient): Frame[] => c.frames().filter((f) => f.op === 'pty.session_frame' && f.payload.kind === 'Error' && f.payload.code === 'PTY_WRITE_FAILED');
const sent = (c: TestClient, data: Buffer): Promise<void> => new Promise((resolve, reject) => c.ws.send(data, (err) => (err ? reject(err) : resolve())));

/** Binary controllers of the stuck session and of a `cat` one (echoing already), on `s`. */
async function controllers(s: TestServer, stuckUrl: string): Promise<{ flooder: TestClient; typist: TestClient }> {
  const other = await s.createSession({ argv: ['/bin/cat'] });
  const protocols = ['pty-ws.v1.binary'];
  const flooder = await TestClient.connect(stuckUrl, { token: s.devToken, protocols });
  await flooder.join({ role: 'controller' });
  const typist = await TestClient.connect(other.attach_url, { token: s.devToken, protocols });
  await typist.join({ role: 'controller' });
  typist.sendRaw(pw1i(Buffer.from('warm-up\n')));
  await typist.waitForOutput('warm-up');
  return { flooder, typist };
}

it('input a program never reads is refused past the cap with PTY_WRITE_FAILED; the host does not grow, other sessions echo, and input flows once the program reads', async () => {
  expect(PTY_INPUT_CAP_BYTES).toBe(MiB);
  server = await startTestServer();
  const go = join(server.dir, 'go');
  // Raw mode, no echo: nothing the flood sends comes back. Until `go` exists nothing reads the
  // terminal; then grep reads all of it and prints the markers it finds.
  const stuck = await server.createSession({
    argv: ['/bin/sh', '-c', `stty raw -echo; while [ ! -e '${go}' ]; do sleep 0.05; done; exec grep --line-buffered -o 'MARK[0-9]*'`],
  });
  const { flooder, typist } = await controllers(server, stuck.attach_url);

  const hostPid = server.ptyHostPid()!;
  const before = rssBytes(hostPid);
  const frame = pw1i(Buffer.alloc(FRAME_BYTES, 'x'));
  for (let i = 0; i < SENT_BYTES / FRAME_BYTES; i++) {
    // Paced by the socket only, not by any answer: as fast as the client can send.
    if (i % 16 === 15) await sent(flooder, frame);
    else flooder.sendRaw(frame);
  }
  // Everything past the caps (the host's, the router's, and the kernel's own buffer) is refused,
  // each frame answered: by the host (the program does not read) or, while the host socket is
  // behind, by the router (src/host-link/input-in-flight.ts).
  const refusable = (SENT_BYTES - PTY_INPUT_CAP_BYTES - INPUT_IN_FLIGHT_BYTES - MiB) / FRAME_BYTES;
  await flooder.waitFor(() => writeFailures(flooder).length >= refusable, `${refusable} PTY_WRITE_FAILED answers`, 20_000);
  const messages = writeFailures(flooder).map((f) => String(f.payload.message));
  expect(messages.some((m) => /not reading its input/.test(m) && m.includes('1 MiB'))).toBe(true);
  for (const m of messages) expect(m).toMatch(/not reading its input|has not taken .* of this session's earlier input yet/);
  // The host holds at most the cap for the session, not what was sent (before the cap it kept a
  // copy of all of it); what it grows by is frames read and not yet collected (~35 MiB here).
  const grown = rssBytes(hostPid) - before;
  expect(grown, `the PTY host grew by ${Math.round(grown / MiB)} MiB`).toBeLessThan(SENT_BYTES / 2);

  // Meanwhile another session echoes promptly.
  const t0 = Date.now();
  typist.sendRaw(pw1i(Buffer.from('other-session\n')));
  await typist.waitForOutput('other-session');
  expect(Date.now() - t0).toBeLessThan(2000);

  // The program reads again: what waited is taken, and new input flows with no more refusals.
  writeFileSync(go, '');
  expect(existsSync(go)).toBe(true);
  await new Promise((r) => setTimeout(r, 1000));
  const refused = writeFailures(flooder).length;
  flooder.sendRaw(pw1i(Buffer.from('\nMARK42\n')));
  await flooder.waitForOutput('MARK42');
  expect(writeFailures(flooder).length).toBe(refused);

  // The connection lived through it all: no binding-level error, no close.
  expect(flooder.closed).toBeNull();
  expect(flooder.frames().filter((f) => f.op === 'Error')).toEqual([]);
  expect(typist.frames().filter((f) => f.payload.kind === 'Error' || f.op === 'Error')).toEqual([]);
  flooder.close();
  typist.close();
}, 60_000);

describe('the PTY host', () => {
  const h = useHost('pty-ws-input-cap-');

  // Also pins node-pty's `fd` getter (pty/pty-input.ts): without it input goes through node-pty
  // unbounded and nothing here is ever refused.
  it("keeps at most the cap of a session's unread input, whether or not a write asks to hear of a refusal", async () => {
    const spec = (argv: string[]) => {
      const sessionId = randomUUID();
      h.started.push(sessionId);
      return { sessionId, backend: 'native', argv, cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir }, cols: 80, rows: 24 };
    };
    const stuck = spec(['/bin/sh', '-c', 'stty raw -echo; echo ready; exec sleep 100000']);
    const cat = spec(['/bin/cat']);
    await h.host.spawn(stuck);
    await h.host.spawn(cat);
    await h.rec.waitForOutput(stuck.sessionId, /ready/);
    const before = rssBytes(h.host.hostPid);

    // Writes without a `wid` (a task's typing, an older router): refused past the cap, unanswered.
    const chunk = new Uint8Array(FRAME_BYTES).fill(0x78);
    // A turn after each, so the socket hands them to the host: the router's own cap (what the
    // socket has not sent) is not what this test is about.
    for (let i = 0; i < SENT_BYTES / FRAME_BYTES; i++) {
      h.host.write(stuck.sessionId, chunk);
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 200));
    const failures: string[] = [];
    h.host.write(stuck.sessionId, chunk, (m) => failures.push(m));
    await vi.waitFor(() => expect(failures).toHaveLength(1), WAIT);
    expect(failures[0]).toMatch(/^input not written: the program in the session is not reading its input \(.+; at most 1 MiB may\)$/);
    const grown = rssBytes(h.host.hostPid) - before;
    expect(grown, `the PTY host grew by ${Math.round(grown / MiB)} MiB`).toBeLessThan(SENT_BYTES / 2);

    // Another session's input is not held up by it.
    h.host.write(cat.sessionId, new TextEncoder().encode('still-typing\n'), (m) => failures.push(m));
    await h.rec.waitForOutput(cat.sessionId, /still-typing/);
    expect(failures).toHaveLength(1);
  }, 60_000);
});

it("a flood into a program that never reads does not hold up another session's keystrokes: the router refuses past what the host has not taken", async () => {
  server = await startTestServer();
  const stuck = await server.createSession({ argv: ['/bin/sh', '-c', 'stty raw -echo; exec sleep 100000'] });
  const { flooder, typist } = await controllers(server, stuck.attach_url);

  let flooding = true;
  const frame = pw1i(Buffer.alloc(FRAME_BYTES, 'x'));
  const flood = (async () => {
    for (let i = 0; flooding; i++) {
      if (i % 8 === 7) await sent(flooder, frame);
      else flooder.sendRaw(frame);
    }
  })();
  // Keystrokes in the other session while the flood goes on: each echoed promptly.
  const echoes: number[] = [];
  for (let i = 0; i < 15; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    typist.sendRaw(pw1i(Buffer.from(`key-${i}\n`)));
    await typist.waitForOutput(`key-${i}`, 60_000);
    echoes.push(Date.now() - t0);
  }
  flooding = false;
  await flood;
  expect(Math.max(...echoes), `echo times ${echoes.join(', ')} ms`).toBeLessThan(1500);
  expect(writeFailures(flooder).length).toBeGreaterThan(0);
  flooder.close();
  typist.close();
}, 120_000);
