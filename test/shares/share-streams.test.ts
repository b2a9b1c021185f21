// A2A SSE streams end with the credential that opened them (docs/sharing.md, docs/a2a.md Streams):
// a share revoked or expired while its SubscribeToTask / SendStreamingMessage stream is open ends
// that stream at once with an UNAUTHENTICATED error event, and nothing the task prints afterwards
// reaches it; the task itself goes on. Against the real router, PTY host, shell and libSQL file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../helpers/a2a.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newToken, writeTokenFile, type TestToken } from '../helpers/tokens.ts';

const alice: TestToken = { token: newToken(), principal: 'alice', scopes: ['pty:control'] };

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pty-ws-share-streams-'));
  writeTokenFile(join(dir, 'tokens.json'), [alice]);
  server = await startTestServer({ PTY_WS_TOKENS_FILE: join(dir, 'tokens.json') });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const instance = () => `${server.origin}/agents/${server.config.instanceId}`;
const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

async function mint(sessionId: string, body: Record<string, unknown>): Promise<{ share_id: string; token: string }> {
  const res = await fetch(`${instance()}/sessions/${sessionId}/shares`, { method: 'POST', headers: headers(alice.token), body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { share_id: string; token: string };
}

const revoke = (sessionId: string, shareId: string) => fetch(`${instance()}/sessions/${sessionId}/shares/${shareId}`, { method: 'DELETE', headers: headers(alice.token) });

/** alice's command typed into the session, answered at once: the task id. */
async function startTask(sessionId: string, command: string): Promise<string> {
  const res = await fetch(`${instance()}/a2a/rest/message:send`, {
    method: 'POST',
    headers: headers(alice.token),
    body: JSON.stringify({ message: userText(command, { contextId: sessionId }), configuration: { returnImmediately: true } }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { task: { id: string } }).task.id;
}

/** alice's view of the task once it is completed: its whole JSON (the artifact's text included). */
async function completed(taskId: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const text = await (await fetch(`${instance()}/a2a/rest/tasks/${taskId}`, { headers: headers(alice.token) })).text();
    if (text.includes('TASK_STATE_COMPLETED')) return text;
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not complete: ${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An SSE body read as it arrives: the text so far, and when (if) the server closed it. */
class SseReader {
  text = '';
  closedAt: number | null = null;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(res: Response) {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    this.reader = res.body!.getReader();
  }

  /** Reads until `done(text)` holds or the body closes; false when `ms` pass first. */
  async until(done: (text: string) => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done(this.text) && this.closedAt === null) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const r = await Promise.race([this.reader.read(), new Promise<null>((res) => (timer = setTimeout(() => res(null), left)))]);
      clearTimeout(timer);
      if (r === null) return false;
      if (r.done) this.closedAt = Date.now();
      else this.text += this.decoder.decode(r.value, { stream: true });
    }
    return true;
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

describe('A2A streams end with the credential that opened them', () => {
  it('revoking a watch share ends its open SubscribeToTask stream (HTTP+JSON) at once with UNAUTHENTICATED; no output after it', async () => {
    const { session_id } = await server.createSession({}, alice.token);
    const taskId = await startTask(session_id, 'sleep 3; echo SECRET_$((6*7))_AFTER_REVOKE');
    const watch = await mint(session_id, {});
    const sse = new SseReader(await fetch(`${instance()}/a2a/rest/tasks/${taskId}:subscribe`, { headers: { authorization: `Bearer ${watch.token}` } }));
    expect(await sse.until((t) => t.includes('"task"'), 5000)).toBe(true);

    const t0 = Date.now();
    expect((await revoke(session_id, watch.share_id)).status).toBe(204);
    await sse.until(() => false, 8000);
    try {
      expect(sse.closedAt, 'the stream must end when its share is revoked').not.toBeNull();
      expect(sse.closedAt! - t0).toBeLessThan(1500);
      expect(sse.text).toMatch(/event: error\ndata: .*"UNAUTHENTICATED".*revoked/);
      expect(sse.text).not.toContain('SECRET_42');
      expect(sse.text).not.toContain('TASK_STATE_COMPLETED');
    } finally {
      await sse.close();
    }
    // The task went on without the guest, and did print the secret.
    expect(await completed(taskId)).toContain('SECRET_42_AFTER_REVOKE');
    expect((await fetch(`${instance()}/a2a/rest/tasks/${taskId}`, { headers: headers(watch.token) })).status).toBe(401);
  }, 30_000);

  it('an expiring watch share ends its JSON-RPC SubscribeToTask stream when it expires', async () => {
    const { session_id } = await server.createSession({}, alice.token);
    const taskId = await startTask(session_id, 'sleep 5; echo SECRET_$((6*8))_AFTER_EXPIRY');
    const minted = Date.now();
    const watch = await mint(session_id, { expires_in: 2 });
    const res = await fetch(`${instance()}/a2a/jsonrpc`, { method: 'POST', headers: headers(watch.token), body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SubscribeToTask', params: { id: taskId } }) });
    const sse = new SseReader(res);
    await sse.until(() => false, 9000);
    try {
      expect(sse.closedAt, 'the stream must end when its share expires').not.toBeNull();
      expect(sse.closedAt! - minted).toBeGreaterThanOrEqual(1500);
      expect(sse.closedAt! - minted).toBeLessThan(3500);
      const last = JSON.parse(/data: (.*)\n\n$/.exec(sse.text)![1]!) as { id: number; error: { data: Array<{ reason: string }> } };
      expect(last).toMatchObject({ jsonrpc: '2.0', id: 7, error: { data: [{ reason: 'UNAUTHENTICATED' }] } });
      expect(sse.text).not.toContain('SECRET_48');
    } finally {
      await sse.close();
    }
    expect(await completed(taskId)).toContain('SECRET_48_AFTER_EXPIRY');
  }, 30_000);

  it('revoking a pair share ends the SendStreamingMessage stream it opened; the task goes on', async () => {
    const { session_id } = await server.createSession({}, alice.token);
    const pair = await mint(session_id, { scope: 'pty:control', expires_in: 600 });
    const res = await fetch(`${instance()}/a2a/rest/message:stream`, {
      method: 'POST',
      headers: headers(pair.token),
      body: JSON.stringify({ message: userText('sleep 3; echo SECRET_$((6*9))_STREAMED', { contextId: session_id }) }),
    });
    const sse = new SseReader(res);
    expect(await sse.until((t) => t.includes('"task"'), 5000)).toBe(true);
    const taskId = (JSON.parse(/data: (.*)\n\n/.exec(sse.text)![1]!) as { task: { id: string } }).task.id;

    const t0 = Date.now();
    expect((await revoke(session_id, pair.share_id)).status).toBe(204);
    await sse.until(() => false, 8000);
    try {
      expect(sse.closedAt, 'the stream must end when its share is revoked').not.toBeNull();
      expect(sse.closedAt! - t0).toBeLessThan(1500);
      expect(sse.text).toMatch(/event: error\ndata: .*"UNAUTHENTICATED"/);
      expect(sse.text).not.toContain('SECRET_54');
    } finally {
      await sse.close();
    }
    expect(await completed(taskId)).toContain('SECRET_54_STREAMED');
  }, 30_000);
});
