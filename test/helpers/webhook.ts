// A push-notification webhook in the test process: a real HTTP server on loopback that records
// every POST (headers and the body read with the SDK's own StreamResponse) and answers with the
// statuses a test sets, 200 once they run out.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamResponse, TaskState } from '@a2a-js/sdk';

export interface Received {
  /** The request target: path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as sent. */
  json: Record<string, unknown>;
  /** The body as the SDK reads it. */
  event: StreamResponse;
  /** What was answered. */
  status: number;
}

export interface Webhook {
  url: string;
  port: number;
  /** Every POST, in the order it came. */
  received: Received[];
  /** Those answered 2xx. */
  delivered(): Received[];
  /** The next POSTs are answered with these statuses, in order. */
  answer(...statuses: number[]): void;
  /** Every POST is answered with this status until `answer` or `heal`. */
  failAll(status: number): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startWebhook(path = '/hook'): Promise<Webhook> {
  const received: Received[] = [];
  let queued: number[] = [];
  let always: number | null = null;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = queued.shift() ?? always ?? 200;
      const json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      received.push({ path: req.url ?? '', headers: req.headers, json, event: StreamResponse.fromJSON(json), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    delivered: () => received.filter((r) => r.status >= 200 && r.status < 300),
    answer: (...statuses) => void (queued = statuses),
    failAll: (status) => void (always = status),
    heal: () => {
      always = null;
      queued = [];
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** What a notification says, short: a state name, or `artifact` (with `+` for an appended chunk). */
export function described(r: Received): string {
  const p = r.event.payload;
  if (p?.$case === 'statusUpdate') return TaskState[p.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];
  if (p?.$case === 'artifactUpdate') return p.value.append ? 'artifact+' : 'artifact';
  return p?.$case ?? '?';
}

/** The task a notification is about. */
export function taskOf(r: Received): string {
  const p = r.event.payload;
  return p?.$case === 'statusUpdate' || p?.$case === 'artifactUpdate' ? p.value.taskId : p?.$case === 'task' ? p.value.id : '';
}
