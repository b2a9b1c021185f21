// The binary form of `write` and `data` between routers and hosts of different releases
// (docs/protocol.md §9.2, feature `binary_data`): the real host sends binary output only to a
// connection that asked for it, so a router from before the feature (JSON frames only) still
// works with it, side by side with a new one; and the router speaks JSON to a host that does not
// name the feature.
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { BINARY_DATA, BINARY_TAG_MIN, BINARY_WRITE, encodeDataFrame } from '../../pty/wire/binary-frame.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { encodeFrame, HostMessageSchema, type HostMessage, type Request } from '../../pty/wire/protocol.ts';
import { fakeHost } from '../helpers/fake-pty-host.ts';
import { useHost, WAIT } from '../helpers/pty-host.ts';

const tagOf = (frame: Uint8Array) => new DataView(frame.buffer, frame.byteOffset).getUint32(4);

/** A router on a raw socket: it sends JSON frames only, and notes which form each frame it gets is in. */
function rawRouter(socketPath: string) {
  const socket: Socket = connect(socketPath);
  const decoder = new FrameDecoder(HostMessageSchema);
  const messages: HostMessage[] = [];
  const tags: number[] = [];
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    // The tag word of each whole frame, then the messages.
    pending = Buffer.concat([pending, chunk]);
    while (pending.byteLength >= 8 && pending.byteLength >= 4 + pending.readUInt32BE(0)) {
      tags.push(pending.readUInt32BE(4));
      pending = pending.subarray(4 + pending.readUInt32BE(0));
    }
    decoder.push(chunk);
    for (let m = decoder.next(); m; m = decoder.next()) messages.push(m);
  });
  const send = (msg: Request) => socket.write(encodeFrame(msg));
  const text = (sessionId: string) =>
    Buffer.concat(messages.flatMap((m) => (m.t === 'data' && m.sessionId === sessionId ? [m.data] : []))).toString('latin1');
  return { socket, messages, tags, send, text };
}

describe('binary frames between releases (a real host)', () => {
  const h = useHost('pty-ws-host-binary-');

  it('a router without the feature gets JSON output and its JSON input is written, beside one that reads binary', async () => {
    // From before the feature: it never asks for binaryData.
    const old = rawRouter(h.socketPath);
    // Asks for binary output as the new router does, to see the frames it gets.
    const asking = rawRouter(h.socketPath);
    try {
      await vi.waitFor(() => expect(old.messages[0]).toMatchObject({ t: 'hello', features: expect.arrayContaining(['binary_data']) }), WAIT);
      old.send({ t: 'events' });
      await vi.waitFor(() => expect(asking.messages[0]).toMatchObject({ t: 'hello' }), WAIT);
      asking.send({ t: 'events', binaryData: true });

      const sessionId = randomUUID();
      h.started.push(sessionId);
      await h.host.spawn({ sessionId, backend: 'native', argv: ['/bin/sh', '-c', 'stty raw -echo; echo ready; exec cat'], cwd: h.dir, env: { PATH: '/usr/bin:/bin', HOME: h.dir }, cols: 80, rows: 24 });
      await h.rec.waitForOutput(sessionId, /ready/);
      // Input from both routers, each in its own form; output to both, each in its own form.
      old.send({ t: 'write', sessionId, data: new TextEncoder().encode('from-old\n') });
      await vi.waitFor(() => expect(old.text(sessionId)).toMatch(/ready[\s\S]*from-old/), WAIT);
      h.host.write(sessionId, new TextEncoder().encode('from-new\n'));
      await vi.waitFor(() => expect(old.text(sessionId)).toMatch(/from-new/), WAIT);
      await h.rec.waitForOutput(sessionId, /ready[\s\S]*from-old[\s\S]*from-new/);
      expect(old.tags.length).toBeGreaterThan(2);
      expect(old.tags.filter((t) => t >= BINARY_TAG_MIN)).toEqual([]);
      await vi.waitFor(() => expect(asking.text(sessionId)).toMatch(/ready[\s\S]*from-old[\s\S]*from-new/), WAIT);
      const dataTags = asking.messages.flatMap((m, i) => (m.t === 'data' ? [asking.tags[i]] : []));
      expect(dataTags.length).toBeGreaterThan(0);
      expect(dataTags.every((t) => t === BINARY_DATA)).toBe(true);
    } finally {
      old.socket.destroy();
      asking.socket.destroy();
    }
  });
});

/** A host the test plays, and the output the router hears from it. */
function playedHost(features: string[]) {
  const host = fakeHost(features);
  const received: string[] = [];
  host.client.subscribe({ onData: (id, data, n) => received.push(`${id} ${n} ${new TextDecoder().decode(data)}`), onExit: () => undefined });
  return { ...host, received };
}

describe('the router against hosts with and without binary_data', () => {
  it('to a host without it: JSON writes, no binaryData asked, JSON output read', () => {
    const host = playedHost(['resize_reply', 'write_failures']);
    host.client.startEvents();
    host.client.write('s1', new Uint8Array([0x61]), () => undefined);
    expect(host.sent).toEqual([{ t: 'events' }, { t: 'write', sessionId: 's1', data: new Uint8Array([0x61]), wid: 1 }]);
    expect(host.frames.map(tagOf).filter((t) => t >= BINARY_TAG_MIN)).toEqual([]);
    host.hostSends(encodeFrame({ t: 'data', sessionId: 's1', n: 1, data: new TextEncoder().encode('a') }));
    expect(host.received).toEqual(['s1 1 a']);
  });

  it('to a host with it: binary writes, binaryData asked, binary and JSON output read', () => {
    const host = playedHost(['binary_data', 'write_failures']);
    host.client.startEvents({ epoch: 'e', after: { s1: 3 } });
    host.client.write('s1', new Uint8Array([0x61]), () => undefined);
    host.client.kill('s1');
    expect(host.sent).toEqual([
      { t: 'events', resume: { epoch: 'e', after: { s1: 3 } }, binaryData: true },
      { t: 'write', sessionId: 's1', data: new Uint8Array([0x61]), wid: 1 },
      { t: 'kill', sessionId: 's1' },
    ]);
    expect(host.frames.map(tagOf).map((t) => t === BINARY_WRITE)).toEqual([false, true, false]);
    host.hostSends(encodeDataFrame('s1', 4, [new TextEncoder().encode('b')]));
    host.hostSends(encodeFrame({ t: 'data', sessionId: 's1', n: 5, data: new TextEncoder().encode('c') }));
    expect(host.received).toEqual(['s1 4 b', 's1 5 c']);
  });
});
