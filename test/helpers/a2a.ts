// The official A2A SDK client (@a2a-js/sdk) against a test server, as a generic A2A user drives it:
// from the AgentCard URL, with the bearer attached by the SDK's own fetch wrapper.
import { GetTaskRequest, ListTasksRequest, SendMessageRequest, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, createAuthenticatingFetchWithRetry, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import type { A2AError } from '@a2a-js/sdk/errors';
import { expect } from 'vitest';
import { uuidv7 } from '../../src/core/ids.ts';

export const TRANSPORTS = ['JSONRPC', 'HTTP+JSON'] as const;
export type Transport = (typeof TRANSPORTS)[number];

export function bearerFetch(token: string): typeof fetch {
  return createAuthenticatingFetchWithRetry(fetch, { headers: async () => ({ authorization: `Bearer ${token}` }), shouldRetryWithHeaders: async () => undefined });
}

/** A client made by ClientFactory.createFromUrl, on `transport` (both are offered; the preference picks one). */
export function a2aClient(origin: string, token: string, transport: Transport): Promise<Client> {
  const fetchImpl = bearerFetch(token);
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [transport],
  });
  return new ClientFactory(options).createFromUrl(origin);
}

/** A user message in A2A's canonical JSON. */
export function userText(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: uuidv7(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** Request objects from A2A's canonical JSON (the SDK's types want every field spelled out). */
export const send = (json: Record<string, unknown>): SendMessageRequest => SendMessageRequest.fromJSON(json);
export const list = (json: Record<string, unknown>): ListTasksRequest => ListTasksRequest.fromJSON(json);
export const get = (id: string, historyLength?: number): GetTaskRequest => GetTaskRequest.fromJSON({ id, historyLength });

export function textOf(task: Task): string {
  const part = task.artifacts[0]?.parts[0]?.content;
  return part?.$case === 'text' ? part.value : '';
}

export const stateName = (s: TaskState | undefined): string => TaskState[s ?? TaskState.TASK_STATE_UNSPECIFIED];

/** Polls GetTask until the task is in `state`. */
export async function untilState(client: Client, id: string, state: TaskState, timeoutMs = 15_000): Promise<Task> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await client.getTask(get(id));
    if (task.status?.state === state) return task;
    if (Date.now() > deadline) throw new Error(`task ${id} is ${stateName(task.status?.state)}, not ${stateName(state)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function collect(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

/** The error a call fails with (the test fails if it succeeds). */
export async function rejection(p: Promise<unknown>): Promise<A2AError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, 'the call must fail').toBeInstanceOf(Error);
  return e as A2AError;
}
