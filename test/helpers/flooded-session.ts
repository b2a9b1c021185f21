// A session whose log holds many megabytes of output, on a router process (startRouterProcess):
// what replay tests read back. The output is base64 of random bytes, logged in frames of up to
// 64 KiB.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import type { RouterProcess } from './processes.ts';
import { until } from './wait.ts';

/** A server frame as a replay test reads it. */
export interface Frame {
  op: string;
  id?: string;
  sequence: number;
  payload: { kind?: string; code?: string; data?: string };
}

/** The session's current_sequence, as REST tells it. */
export async function currentSequence(router: RouterProcess, sessionId: string): Promise<number> {
  const res = await fetch(`${router.origin}/agents/local/sessions/${sessionId}`, { headers: { authorization: `Bearer ${router.token}` } });
  return Number(((await res.json()) as { current_sequence: number }).current_sequence);
}

/** A process's resident size in bytes. */
export const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/**
 * Creates the session, starts it with a controller's join and returns its id once all of
 * `outputBytes` is logged: when the numbering stops moving (on a loaded machine the controller
 * itself may be repainted instead of getting every byte).
 */
export async function floodedSession(router: RouterProcess, outputBytes: number, timeoutMs: number): Promise<string> {
  const { session_id: sessionId } = await router.createSession({ argv: ['/bin/sh', '-c', `stty raw -echo; head -c ${(outputBytes / 4) * 3} /dev/urandom | base64 -w 0; exec sleep 3600`] });
  const ctl = new WebSocket(router.attachUrl(sessionId), ['pty-ws.v1.binary'], { headers: { authorization: `Bearer ${router.token}` }, perMessageDeflate: false });
  ctl.on('message', () => undefined);
  await new Promise((resolve, reject) => {
    ctl.once('open', resolve);
    ctl.once('error', reject);
  });
  ctl.send(JSON.stringify({ op: 'pty.join_session', id: 'flood', ts: new Date().toISOString(), payload: { role: 'controller' } }));
  let last = -1;
  let still = 0;
  await until(
    async () => {
      await new Promise((r) => setTimeout(r, 250));
      const now = await currentSequence(router, sessionId);
      still = now === last ? still + 1 : 0;
      last = now;
      return (still >= 8 && now > 100) || undefined;
    },
    'the output to end',
    timeoutMs,
  );
  ctl.close();
  return sessionId;
}
