// Figure 6: memory per idle session and per attached client; session creation time.
import { BenchClient } from '../lib/client.ts';
import type { BenchServer } from '../lib/server.ts';
import { spread, type Spread } from '../lib/stats.ts';

export interface ScaleFigures {
  sessions: number;
  createMs: Spread;
  attachMs: Spread;
  rssBaseline: { router: number; host: number };
  perIdleSessionBytes: number;
  perIdleSessionRouterBytes: number;
  perIdleSessionHostBytes: number;
  clients: number;
  perClientBytes: number;
}

const gc = () => new Promise((r) => setTimeout(r, 1500));

export async function scale(server: BenchServer, sessions: number, clients: number): Promise<ScaleFigures> {
  await gc();
  const before = server.rss();
  const create: number[] = [];
  const attach: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const t0 = performance.now();
    ids.push(await server.createSession({ argv: ['/bin/sleep', '3600'], terminal_size: { cols: 120, rows: 30 } }));
    create.push(performance.now() - t0);
  }
  for (const id of ids) {
    const t0 = performance.now();
    const c = await BenchClient.connect(server.attachUrl(id), server.token, true);
    await c.join('controller');
    // The server's per-principal upgrade rate limit is not what this measures.
    attach.push(performance.now() - t0 - c.rateLimitedMs);
    c.close();
  }
  await gc();
  const idle = server.rss();
  const held: BenchClient[] = [];
  for (let i = 0; i < clients; i++) {
    const c = await BenchClient.connect(server.attachUrl(ids[0]!), server.token, true);
    await c.join('observer');
    held.push(c);
  }
  await gc();
  const attached = server.rss();
  for (const c of held) c.close();
  const router = (idle.router - before.router) / sessions;
  const host = (idle.host - before.host) / sessions;
  return {
    sessions,
    createMs: spread(create),
    attachMs: spread(attach),
    rssBaseline: before,
    perIdleSessionBytes: router + host,
    perIdleSessionRouterBytes: router,
    perIdleSessionHostBytes: host,
    clients,
    perClientBytes: (attached.router - idle.router) / clients,
  };
}
