// `pty-ws attach <url|session-id>`: the local TTY in raw mode and in its own alternate screen,
// joined to a session through the client library. Window-size changes become resizes, Ctrl-] d
// detaches (c / o take or give up control), a dropped connection is rejoined with replay_from, and
// the session process's exit status becomes this command's.
import { hostname, userInfo } from 'node:os';
import { constants } from 'node:os';
import { PtyClient } from '../../../client/pty-client.ts';
import type { ClosedInfo, EndInfo } from '../../../client/types.ts';
import { isShareToken, shareLinkEnded } from '../../../client/share-link.ts';
import type { ClientConfig } from '../../../core/config.ts';
import { nodeWebSocket } from '../ws-client.ts';
import { AttachScreen } from './attach-screen.ts';
import { describeUnreachable } from './report.ts';
import { ENTER, PrefixKey, RESTORE } from './terminal.ts';

export interface AttachArgs {
  target: string;
  observe: boolean;
  binary: boolean;
  /** The session's programs may set the clipboard (OSC 52) through the local terminal. */
  clipboard?: boolean;
  label?: string;
}

/** Exit status when pty-ws itself fails (refused, connection lost), as ssh does. */
export const CONNECTION_FAILED = 255;

export async function attachCommand(args: AttachArgs, config: ClientConfig): Promise<number> {
  const { stdin, stdout, stderr } = process;
  const url = attachUrl(args.target, config);
  const tty = stdout.isTTY === true;
  const window = () => ({ cols: stdout.columns, rows: stdout.rows });
  const client = new PtyClient({
    url,
    token: config.token ?? null,
    binary: args.binary,
    role: args.observe ? 'observer' : 'controller',
    // A bearer that may only watch watches, as the page does.
    observeIfControlRefused: true,
    // A share link's guest goes by the share's label (the server's default for it) unless named.
    ...(args.label !== undefined || !isShareToken(config.token) ? { label: args.label ?? defaultLabel() } : {}),
    ...(tty ? { size: window() } : {}),
    webSocket: nodeWebSocket(),
    reconnect: { maxAttempts: 30 },
  });
  const screen = new AttachScreen(stdout, client, tty, sessionName(url), args.clipboard === true);

  let noticeShown = false;
  // The last refusal's reason: a revoked share link ends the connection with it.
  let refusal: string | undefined;
  client.on('error', (e) => {
    if (e.code === 'UNAUTHENTICATED') refusal = e.reason;
  });
  // The local terminal answers the queries printed to it (DA, CPR, DECRQM…) on stdin, and stdin is
  // sent as input: output replayed at a rejoin (all this command ever gets replayed) is not drawn.
  // The rejoin's Keyframe repaints the screen with it folded in (the cursor is marked lost with the
  // notice below), and a snapshot carries no queries (docs/protocol.md §6.1, §6.3). Filtering the
  // queries out instead would have to know every one a terminal answers; one missed is typed.
  client.on('output', (data, _sequence, replayed) => {
    if (!replayed) screen.output(data);
  });
  client.on('keyframe', (k) => {
    if (k.repaint) screen.repaint(k.snapshot);
  });
  client.on('role', (r) => screen.role(r.role, r.reason));
  client.on('resize', () => screen.sizeChanged());
  client.on('state', (state) => {
    if (state === 'reconnecting' && !noticeShown) {
      noticeShown = true;
      const what = client.serverShutDown ? 'the server shut down; the session is still running' : 'connection lost';
      stdout.write(`\r\n\x1b[7m[pty-ws: ${what}, reconnecting…]\x1b[0m\r\n`);
      // The notice is now on the screen: the rejoin's Keyframe repaints over it.
      client.cursor.lost();
    }
    if (state === 'live') {
      noticeShown = false;
      fitSession();
    }
  });

  const fitSession = () => {
    if (client.role !== 'controller' || !tty) return;
    const g = client.geometry;
    if (!g || g.cols !== stdout.columns || g.rows !== stdout.rows) client.resize(stdout.columns, stdout.rows);
  };
  const onWindow = () => {
    fitSession();
    screen.sizeChanged();
  };
  const prefixKey = new PrefixKey();
  const onInput = (chunk: Buffer) => {
    const { send, action } = prefixKey.feed(chunk);
    // Before the join and while reconnecting the client holds input for the (re)join; an observer's keys go nowhere.
    const mayType = client.role === null ? !args.observe : client.role === 'controller';
    if (send.byteLength > 0 && mayType) client.send(send);
    if (action === 'detach') void client.leave();
    if (action === 'control' || action === 'observe') client.requestRole(action === 'control' ? 'controller' : 'observer');
  };
  const onSignal = (signal: NodeJS.Signals) => {
    caughtSignal = signal;
    client.close();
  };
  let caughtSignal: NodeJS.Signals | null = null;

  const raw = stdin.isTTY === true;
  if (raw) stdin.setRawMode(true);
  if (tty) stdout.write(ENTER);
  stdin.on('data', onInput);
  stdin.resume();
  stdout.on('resize', onWindow);
  for (const s of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(s, onSignal);

  let end: EndInfo;
  try {
    await client.connect().catch(() => undefined);
    end = await client.whenEnded();
  } finally {
    stdin.off('data', onInput);
    stdout.off('resize', onWindow);
    for (const s of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.off(s, onSignal);
    if (raw) stdin.setRawMode(false);
    stdin.pause();
    screen.dispose();
    if (tty) stdout.write(RESTORE);
  }
  // A refused upgrade says nothing but its status to a WebSocket client: REST says why.
  if (end.reason === 'refused' && refusal === undefined && /\b401\b/.test(end.message ?? '')) refusal = await refusalCode(url, config.token);
  const linkEnded = shareLinkEnded(refusal);
  const { message, status } = linkEnded && (end.reason === 'refused' || end.reason === 'gave_up') ? { message: `pty-ws: ${linkEnded}`, status: CONNECTION_FAILED } : outcome(end, caughtSignal, url);
  stderr.write(`${message}\n`);
  return status;
}

/** The `code` of the 401 the session's REST resource answers this bearer with (e.g. `share.revoked`). */
async function refusalCode(url: string, token: string | undefined): Promise<string | undefined> {
  try {
    const res = await fetch(url.replace(/^ws/, 'http').replace(/\/attach$/, ''), { headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (res.status !== 401) return undefined;
    const body = (await res.json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

function outcome(end: EndInfo, signal: NodeJS.Signals | null, url: string): { message: string; status: number } {
  switch (end.reason) {
    case 'session_closed':
      return { message: `[pty-ws: ${end.serverShutdown ? 'the server shut down; ' : ''}the session ended: ${describeClosed(end.closed)}]`, status: exitStatus(end.closed) };
    case 'left':
      return { message: '[pty-ws: detached]', status: 0 };
    case 'client_closed':
      return { message: `[pty-ws: ${signal ?? 'closed'}]`, status: signal ? 128 + (constants.signals[signal] ?? 0) : 0 };
    case 'refused':
      return { message: `pty-ws: ${describeUnreachable(end.message, httpOrigin(url)) ?? `cannot attach: ${explain(end.message)}`}`, status: CONNECTION_FAILED };
    case 'gave_up':
      return { message: `pty-ws: ${end.serverShutdown ? 'the server shut down and did not come back' : 'connection lost'}: ${end.message ?? 'no answer'}`, status: CONNECTION_FAILED };
  }
}

/** The session process's status as a shell would report it: its exit code, or 128 + the signal. */
export function exitStatus(closed: ClosedInfo | undefined): number {
  if (!closed) return CONNECTION_FAILED;
  if (closed.exitCode !== null) return closed.exitCode;
  const signal = /signal (\d+)/.exec(closed.detail ?? '')?.[1];
  return signal ? 128 + Number(signal) : 1;
}

function describeClosed(c: ClosedInfo | undefined): string {
  if (!c) return 'unknown';
  if (c.reason === 'normal') return `exit ${c.exitCode ?? '?'}`;
  return c.detail ? `${c.reason} (${c.detail})` : c.reason;
}

function explain(message: string | undefined): string {
  const status = /Unexpected server response: (\d+)/.exec(message ?? '')?.[1];
  const known: Record<string, string> = {
    '400': 'the server refused the request (HTTP 400)',
    '401': 'the server refused the bearer token (HTTP 401): pass --token or set PTY_WS_TOKEN',
    '403': 'this token may not attach to this session (HTTP 403)',
    '404': 'no such session (HTTP 404)',
    '429': 'too many connections for this token (HTTP 429)',
  };
  return (status && known[status]) || message || 'refused';
}

/** An attach URL, an http(s) URL to the same, or a bare session id on the configured server. */
export function attachUrl(target: string, config: ClientConfig): string {
  if (/^wss?:\/\//.test(target)) return target;
  if (/^https?:\/\//.test(target)) return target.replace(/^http/, 'ws');
  return `${config.serverUrl.replace(/^http/, 'ws')}/agents/${encodeURIComponent(config.instanceId)}/sessions/${encodeURIComponent(target)}/attach`;
}

/** http(s)://host:port of a ws(s) attach URL: the server as people name it. */
function httpOrigin(url: string): string {
  return new URL(url).origin.replace(/^ws/, 'http');
}

/** The session id of an attach URL, shortened as people read it. */
function sessionName(url: string): string {
  const id = decodeURIComponent(/\/sessions\/([^/]+)\/attach/.exec(url)?.[1] ?? '');
  return id ? `session ${id.slice(0, 8)}` : 'the session';
}

function defaultLabel(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return 'pty-ws attach';
  }
}
