// `pty-ws sessions list` prints what other principals chose (labels, commands) onto the caller's
// terminal: escape sequences in them must show as text, never act (docs/security.md, item 9).
// The real CLI against the real server; a label that clears the screen, rewrites a line and sets
// the clipboard (OSC 52).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const BIN = new URL('../../bin/pty-ws.js', import.meta.url).pathname;
const EVIL_LABEL = 'ok\u001b[2J\u001b[H\rroot-shell\u001b]52;c;cm0gLXJmIH4K\u0007\u009b31m\u202etxt.exe\\';
const EVIL_COMMAND = "printf '\u001b[31mred\u001b[0m'";

let server: TestServer;
let sessionId: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ session_id: sessionId } = await server.createSession({ label: EVIL_LABEL, command: EVIL_COMMAND }));
}, 60_000);
afterAll(() => server?.stop());

async function list(...flags: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'sessions', 'list', ...flags], {
    env: { PATH: process.env.PATH, PTY_WS_URL: server.origin, PTY_WS_TOKEN: server.devToken! },
  });
  return stdout;
}

/** Everything a terminal would act on, other than the newlines that end the lines. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('pty-ws sessions list', () => {
  it('shows escape sequences in labels and commands as text', async () => {
    const out = await list();
    expect(out).not.toMatch(CONTROLS);
    const line = out.split('\n').find((l) => l.startsWith(sessionId));
    expect(line).toContain('ok\\x1b[2J\\x1b[H\\x0droot-shell\\x1b]52;c;cm0gLXJmIH4K\\x07\\x9b31m\\u202etxt.exe');
    expect(line).toContain("printf '\\x1b[31mred\\x1b[0m'");
  });

  it('--json stays the same JSON and prints no control character either', async () => {
    const out = await list('--json');
    expect(out).not.toMatch(CONTROLS);
    const mine = (JSON.parse(out) as Array<{ session_id: string; label: string; command: string }>).find((s) => s.session_id === sessionId);
    expect(mine?.label).toBe(EVIL_LABEL);
    expect(mine?.command).toBe(EVIL_COMMAND);
  });
});
