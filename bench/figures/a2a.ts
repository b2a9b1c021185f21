// Figure 9 (BENCH_ONLY=a2a): an A2A SendMessage of `echo hi` into an existing session,
// round trip until the task is COMPLETED, with the real @a2a-js/sdk client made from the instance's
// AgentCard (as test/helpers/a2a.ts does), on each standard binding (JSON-RPC, HTTP+JSON), the two
// taking turns sample by sample so machine load falls on both alike.
import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, createAuthenticatingFetchWithRetry, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { summarize, within, type Latency } from './latency.ts';

const TRANSPORTS = ['JSONRPC', 'HTTP+JSON'] as const;

function sdkClient(server: BenchServer, transport: (typeof TRANSPORTS)[number]): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, { headers: async () => ({ authorization: `Bearer ${server.token}` }), shouldRetryWithHeaders: async () => undefined });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [transport],
  });
  return new ClientFactory(options).createFromUrl(server.origin);
}

/** One SendMessage of `echo hi` into the session, blocking until the task ends; its ms. */
async function echoHi(client: Client, sessionId: string): Promise<number> {
  const request = SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'echo hi' }], contextId: sessionId } });
  const t0 = performance.now();
  const task = await within(client.sendMessage(request), 10_000, 'SendMessage echo hi');
  const ms = performance.now() - t0;
  if (!('status' in task) || task.status?.state !== TaskState.TASK_STATE_COMPLETED) throw new Error(`SendMessage echo hi did not complete: ${JSON.stringify(task).slice(0, 300)}`);
  return ms;
}

export type A2AFigure = Record<(typeof TRANSPORTS)[number], Latency>;

export async function a2aEcho(server: BenchServer, samples: number, warmup: number): Promise<A2AFigure> {
  const sessionId = await server.createSession({});
  // The first join spawns the session's shell; an observer attached, as a person watching would be.
  const watcher = await BenchClient.connect(server.attachUrl(sessionId), server.token, true);
  try {
    await watcher.join('observer');
    const clients = await within(Promise.all(TRANSPORTS.map((t) => sdkClient(server, t))), 10_000, 'the A2A clients from the AgentCard');
    const times: number[][] = TRANSPORTS.map(() => []);
    for (let i = 0; i < samples + warmup; i++) {
      for (let k = 0; k < TRANSPORTS.length; k++) {
        const ms = await echoHi(clients[k]!, sessionId);
        if (i >= warmup) times[k]!.push(ms);
      }
    }
    return { JSONRPC: summarize(times[0]!), 'HTTP+JSON': summarize(times[1]!) };
  } finally {
    watcher.close();
    await server.deleteSession(sessionId);
  }
}
