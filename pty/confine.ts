// Confining session programs (docs/security.md, item 2), applied by the PTY host to every spawn
// whatever the backend: the program is run through existing, audited tools rather than code of
// our own that changes credentials or builds namespaces.
// - A session user: `setpriv` (util-linux) sets the real, effective and saved uid/gid and the
//   user's groups, then execs the program; nothing of root is kept (no capabilities survive a
//   uid change away from 0).
// - The bwrap sandbox: bubblewrap gives the session its own PID and IPC namespaces and a fresh
//   /proc (no other session's or the service's processes, so no /proc/<pid>/environ), a fresh
//   /dev with its own devpts (no other session's terminal), and empty tmpfs over the state dir,
//   the socket dir and the database dir. bubblewrap was chosen because it is small, packaged by
//   Debian, needs no daemon, and is what Flatpak uses for the same job.

import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { SpawnSpec } from '../src/ports.ts';
import type { ConfinementReport, SandboxMode } from '../src/session-confinement.ts';
import { run } from './backends/exec.ts';
import { PtyHostError } from './protocol.ts';

export interface ConfinementOptions {
  user: string | undefined;
  sandbox: SandboxMode;
  /** Absolute directories no session may see (bwrap only). */
  hide: readonly string[];
  /** The host's own $HOME: the router's default working directory, which becomes the session user's home. */
  hostHome: string | undefined;
}

interface SessionUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export interface Confinement {
  readonly report: ConfinementReport;
  /** The spec and program a backend runs instead (argv[0] is the program). Throws PtyHostError. */
  apply(spec: SpawnSpec, program: string): { spec: SpawnSpec; program: string };
}

/** Sessions run as the host's own user, unsandboxed: the default. */
export const UNCONFINED: Confinement = {
  report: { user: null, sandbox: 'none' },
  apply: (spec, program) => ({ spec, program }),
};

const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/** Resolves the tools and the user once, at host start; throws an Error naming what is missing. */
export async function loadConfinement(o: ConfinementOptions): Promise<Confinement> {
  const user = o.user ? await lookupUser(o.user) : undefined;
  const setpriv = user ? await findTool('setpriv', 'util-linux') : undefined;
  const bwrap = o.sandbox === 'bwrap' ? await findTool('bwrap', 'bubblewrap') : undefined;
  if (bwrap) await probeSandbox(bwrap);
  const hide = [...new Set(o.hide.map((d) => path.resolve(d)))];
  return {
    report: { user: user?.name ?? null, sandbox: o.sandbox },
    apply(spec, program) {
      let argv = [program, ...spec.argv.slice(1)];
      let env = spec.env;
      let cwd = spec.cwd;
      if (user) {
        if (cwd === o.hostHome) cwd = user.home;
        env = { ...env, HOME: user.home, USER: user.name, LOGNAME: user.name };
        argv = [setpriv!, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', '--', ...argv];
      }
      if (bwrap) {
        const hidden = hide.find((d) => cwd === d || cwd.startsWith(`${d}/`));
        if (hidden) throw new PtyHostError('bad_cwd', `working directory ${cwd} is hidden from sessions by the sandbox (it is in ${hidden})`);
        argv = [bwrap, ...sandboxArgs(hide, cwd, !user), '--', ...argv];
      }
      return { spec: { ...spec, argv, env, cwd }, program: argv[0]! };
    },
  };
}

/**
 * The whole filesystem as it is (the user's own permissions still apply), minus what the service
 * keeps. `--die-with-parent` is left out on purpose: a tmux/screen session's parent is its
 * multiplexer server, and a native one already ends with its PTY.
 */
function sandboxArgs(hide: readonly string[], cwd: string, stillRoot: boolean): string[] {
  return [
    '--dev-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--unshare-pid',
    '--unshare-ipc',
    ...hide.flatMap((d) => ['--tmpfs', d]),
    '--chdir', cwd,
    // Root in the sandbox keeps no capabilities (no remount, no ptrace, no raw devices).
    ...(stillRoot ? ['--cap-drop', 'ALL'] : []),
  ];
}

async function lookupUser(name: string): Promise<SessionUser> {
  const r = await run('/usr/bin/getent', ['passwd', name]);
  const fields = r.code === 0 ? r.stdout.trim().split(':') : [];
  if (fields.length < 7) throw new Error(`PTY_WS_SESSION_USER: no such user ${JSON.stringify(name)} (getent passwd found none)`);
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (uid === 0) throw new Error(`PTY_WS_SESSION_USER: ${name} is root (uid 0): name an unprivileged user`);
  const own = process.getuid?.();
  if (own !== 0 && own !== uid) throw new Error(`PTY_WS_SESSION_USER: the PTY host runs as uid ${own}, and only root can start sessions as another user (${name})`);
  return { name, uid, gid, home: fields[5] || '/' };
}

async function findTool(name: string, debianPackage: string): Promise<string> {
  for (const dir of TOOL_DIRS) {
    const file = `${dir}/${name}`;
    if (await access(file, constants.X_OK).then(() => true, () => false)) return file;
  }
  throw new Error(`${name} is needed to confine sessions and is not installed (Debian package ${debianPackage})`);
}

/** A sandbox that cannot be built here must stop the host now, not fail every session later. */
async function probeSandbox(bwrap: string): Promise<void> {
  const r = await run(bwrap, [...sandboxArgs([], '/', true), '--', '/bin/true']);
  if (r.code !== 0) throw new Error(`PTY_WS_SESSION_SANDBOX=bwrap: bubblewrap cannot build a sandbox here: ${r.stderr.trim() || `exit ${r.code}`}`);
}
