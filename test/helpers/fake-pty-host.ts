// The router's side of the PTY host socket against a host the test plays (unit tests of
// src/host-link/client.ts): what the router sends, raw and decoded, and a way to send it host frames.
import { PtyHostConnection, type HostSocket, type HostSocketEvents } from '../../src/host-link/client.ts';
import { FrameDecoder } from '../../pty/wire/frame-decoder.ts';
import { encodeFrame, PROTOCOL_VERSION, RequestSchema, type Request } from '../../pty/wire/protocol.ts';

/** A connection greeted by a host naming `features` (none at all when undefined: an older host). */
export function fakeHost(features: string[] | undefined) {
  const frames: Uint8Array[] = [];
  const sent: Request[] = [];
  const decoder = new FrameDecoder(RequestSchema);
  let events: HostSocketEvents | undefined;
  const state = { paused: false };
  const socket: HostSocket = {
    write: (frame, written) => {
      frames.push(frame);
      decoder.push(frame);
      for (let r = decoder.next(); r; r = decoder.next()) sent.push(r);
      written?.();
    },
    end: () => events?.close(),
    destroy: () => events?.close(),
    writable: true,
    closed: false,
    pause: () => void (state.paused = true),
    resume: () => void (state.paused = false),
    listen: (e) => void (events = e),
  };
  const client = new PtyHostConnection(socket);
  events!.data(encodeFrame({ t: 'hello', protocol: PROTOCOL_VERSION, pid: 1, backends: ['native'], ...(features ? { features } : {}) }));
  return { client, frames, sent, state, hostSends: (frame: Uint8Array) => events!.data(frame) };
}
