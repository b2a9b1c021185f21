// The physical floor of a WebSocket terminal in Node: one process, node-pty and a `ws` server,
// bytes relayed both ways with nothing else (no roles, log, emulator or PTY host hop) — what
// ttyd does in C. A baseline for figures 1 and 2, run as a child process like the real server.
import pty from 'node-pty';
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
wss.on('connection', (ws, req) => {
  const argv = JSON.parse(new URL(req.url ?? '/', 'http://x').searchParams.get('argv') ?? '["/bin/sh"]') as string[];
  const p = pty.spawn(argv[0]!, argv.slice(1), { cols: 120, rows: 30, encoding: null as unknown as string });
  p.onData((d) => ws.send(d as unknown as Buffer));
  p.onExit(() => ws.close());
  ws.on('message', (d: Buffer) => p.write(d as unknown as string));
  ws.on('close', () => p.kill());
});
process.on('SIGTERM', () => process.exit(0));
wss.on('listening', () => {
  const address = wss.address();
  if (address && typeof address === 'object') console.log(`listening ${address.port}`);
});
