// The store against a real libSQL server (sqld on 127.0.0.1 with JWT auth) instead of a file.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/protocol/logged-frames.ts';
import type { SessionRecord } from '../../src/ports/store.ts';
import { StoreOpenError } from '../../storage/open-error.ts';
import { openStore } from '../../storage/open.ts';
import { startSqld } from '../helpers/sqld.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pty-ws-remote-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const session: SessionRecord = {
  id: 'remote',
  instanceId: 'local',
  backend: 'native',
  sessionClass: 'interactive',
  argv: ['bash', '-l'],
  command: null,
  cwd: '/tmp',
  env: { TERM: 'xterm-256color' },
  cols: 80,
  rows: 24,
  label: null,
  state: 'created',
  createdAt: '2026-01-01T00:00:00.000Z',
  closedAt: null,
  exitCode: null,
  closeReason: null,
  createdBy: null,
  hadMember: false,
  createdVia: null,
  host: null,
};

const frame = (sequence: number): LogEntry => ({
  sessionId: 'remote',
  sequence,
  kind: 'Output',
  createdAt: 1_000_000 + sequence,
  frame: JSON.stringify({ op: 'pty.session_frame', sequence, payload: { kind: 'Output', data: `chunk ${sequence}` } }),
});

describe('a libSQL server (sqld)', () => {
  it('holds the same store over ws://, http:// and libsql://?tls=0 with a JWT, and refuses a token it did not sign', { timeout: 30_000 }, async () => {
    const sqld = await startSqld(dir);
    try {
      const overWs = await openStore({ url: sqld.wsUrl, authToken: sqld.authToken });
      await overWs.createSession(session);
      const frames = Array.from({ length: 1200 }, (_, i) => frame(i + 1));
      for (const entry of frames) overWs.appendLog(entry);
      await overWs.close();

      const overHttp = await openStore({ url: sqld.httpUrl, authToken: sqld.authToken });
      expect(await overHttp.getSession('local', 'remote')).toEqual(session);
      expect(await overHttp.readLog('remote', 0)).toEqual(frames);
      expect(await overHttp.lastSequence('remote')).toBe(1200);
      await overHttp.close();

      // libsql:// is https:// (or, with ?tls=0, http://) to the client; sqld here serves no TLS.
      const overLibsql = await openStore({ url: `${sqld.httpUrl.replace(/^http:/, 'libsql:')}?tls=0`, authToken: sqld.authToken });
      expect(await overLibsql.readLog('remote', 1190)).toEqual(frames.slice(1190));
      await overLibsql.close();

      const refusedOverHttp = await openStore({ url: sqld.httpUrl, authToken: sqld.foreignToken }).catch((e: unknown) => e);
      expect(refusedOverHttp).toBeInstanceOf(StoreOpenError);
      expect((refusedOverHttp as Error).message).toMatch(new RegExp(`^cannot use the database ${sqld.httpUrl}: the server refused the credentials`));
      // Over ws:// sqld either says so or just drops the socket (close 1006): then the message can only suspect the token.
      const refusedOverWs = await openStore({ url: sqld.wsUrl, authToken: sqld.foreignToken }).catch((e: unknown) => e);
      expect(refusedOverWs).toBeInstanceOf(StoreOpenError);
      expect((refusedOverWs as Error).message).toMatch(
        new RegExp(`^cannot use the database ${sqld.wsUrl}: (the server refused the credentials|the server closed the connection without a reason.*): check PTY_WS_DATABASE_AUTH_TOKEN`),
      );
    } finally {
      await sqld.stop();
    }
  });
});

