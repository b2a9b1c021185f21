// Contexts an A2A message started end once idle (PTY_WS_A2A_CONTEXT_IDLE_SECONDS, docs/a2a.md):
// no unfinished task and no attached client for that long. Against the real router, PTY host and
// libSQL file, with the official SDK client sending the messages and a real pty-ws client attached.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';
import { a2aClient, send, userText } from '../helpers/a2a.ts';
import { until } from '../helpers/wait.ts';

const carla: TestToken = { token: newToken(), principal: 'carla', scopes: ['pty:control'] };

let dir: string;
let server: TestServer;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-idle-'));
  writeTokenFile(join(dir, 'tokens.json'), [carla]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json'), PTY_WS_A2A_CONTEXT_IDLE_SECONDS: '1' });
  client = await a2aClient(server.origin, carla.token, 'JSONRPC');
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const stateOf = async (sessionId: string) =>
  ((await (await fetch(`${server.origin}/agents/local/sessions/${sessionId}`, { headers: { authorization: `Bearer ${carla.token}` } })).json()) as { state: string; close_reason?: string }).state;
const contextOf = async (command: string, configuration: Record<string, unknown> = {}) =>
  ((await client.sendMessage(send({ message: userText(command), configuration }))) as { contextId: string }).contextId;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('contexts A2A messages started', () => {
  it('end after the idle time with no task and no attached client; not while a client is attached or a task runs', async () => {
    const idle = await contextOf('echo idle');
    // Joined while its task still runs: never idle before the client is there.
    const watched = await contextOf('sleep 1', { returnImmediately: true });
    const watcher = await TestClient.connect(server.attachUrl(watched), { token: carla.token });
    await watcher.join({ role: 'observer' });
    const busy = await contextOf('sleep 5', { returnImmediately: true });
    // A session made over REST, used by an A2A message (contextId) and left alone, is never ended here.
    const rest = (await server.createSession({}, carla.token)).session_id;
    await client.sendMessage(send({ message: userText('echo rest', { contextId: rest }) }));

    await until(async () => (await stateOf(idle)) === 'closed', 'the idle context to end', 10_000);
    await pause(1200);
    expect(await stateOf(watched)).toBe('running');
    expect(await stateOf(busy)).toBe('running');
    expect(await stateOf(rest)).toBe('running');
    expect(server.logs.some((l) => l.includes('audit.context_expired') && l.includes(idle))).toBe(true);

    // Once the client leaves and the task ends, those two are idle too.
    watcher.close();
    await until(async () => (await stateOf(watched)) === 'closed', 'the context its client left to end', 10_000);
    await until(async () => (await stateOf(busy)) === 'closed', 'the context whose task finished to end', 15_000);
    expect(await stateOf(rest)).toBe('running');
  });
});
