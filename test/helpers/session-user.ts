// The unprivileged user confined sessions run as (PTY_WS_SESSION_USER), and how a test asks a
// session's shell a question. Creating the user needs root (CI runs as root).
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { b64, type TestClient } from './client.ts';
import { until } from './wait.ts';

export const SESSION_USER = 'ptyws-session-test';
export const SESSION_USER_HOME = '/var/tmp/ptyws-session-test-home';

/** Creates the session user (and its home) when missing; returns its uid. */
export function ensureSessionUser(): number {
  try {
    execFileSync('id', ['-u', SESSION_USER], { stdio: 'ignore' });
  } catch {
    try {
      execFileSync('useradd', ['--system', '--no-create-home', '--home-dir', SESSION_USER_HOME, '--shell', '/bin/sh', SESSION_USER]);
    } catch (e) {
      // A test file running in parallel may have created it meanwhile.
      if (!isUser(SESSION_USER)) throw e;
    }
  }
  const uid = Number(execFileSync('id', ['-u', SESSION_USER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', SESSION_USER], { encoding: 'utf8' }).trim());
  mkdirSync(SESSION_USER_HOME, { recursive: true });
  chownSync(SESSION_USER_HOME, uid, gid);
  return uid;
}

function isUser(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Types `cmd` and returns what it printed after `tag-` (a number, or a word). */
export async function ask(c: TestClient, tag: string, cmd: string): Promise<string> {
  const before = c.output().length;
  c.send('pty.session_input', { data: b64(`${cmd}\r`) });
  const re = new RegExp(`${tag}-([A-Za-z0-9_/.-]+)`);
  return until(() => re.exec(c.output().slice(before))?.[1], `${tag} answer`);
}

/** Every process (but this one) as /proc shows it: pid, real uid, command line and environment. */
export function processes(): Array<{ pid: number; uid: number; cmdline: string; environ: string[] }> {
  const out = [];
  for (const e of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      if (Number(e) === process.pid) continue;
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${e}/status`, 'utf8'))?.[1]);
      const cmdline = readFileSync(`/proc/${e}/cmdline`, 'latin1');
      const environ = readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').filter(Boolean);
      out.push({ pid: Number(e), uid, cmdline, environ });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
