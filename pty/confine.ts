// Confining session programs (docs/security.md, "Session confinement"), applied by the PTY host to
// every spawn whatever the backend: the program is run through existing, audited tools rather than
// code of our own that changes credentials or builds namespaces.
// - A session user: `setpriv` (util-linux) sets the real, effective and saved uid/gid and the
//   user's groups, then execs the program; nothing of root is kept (no capabilities survive a
//   uid change away from 0).
// - The bwrap sandbox: bubblewrap gives the session its own PID and IPC namespaces and a fresh
//   /proc (no other session's or the service's processes, so no /proc/<pid>/environ), a fresh
//   /dev with its own devpts (no other session's terminal), read-only system directories and
//   server code, and hides what the service keeps. bubblewrap was chosen because it is small,
//   packaged by Debian, needs no daemon, and is what Flatpak uses for the same job.
// - Whatever runs before the last exec runs as the host's user, so the session's variables pass
//   it sealed (backends/session-launch.ts) and loader variables are refused outright.

import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { SpawnSpec } from '../src/ports/pty-host.ts';
import { confinedEnvProblem, effectiveNetwork, type ConfinementReport, type SandboxMode, type SessionNetwork } from '../src/core/session-confinement.ts';
import { run } from './backends/exec.ts';
import { findProgram } from './backends/find-program.ts';
import { launchArgv, sealEnv } from './backends/session-launch.ts';
import { PtyHostError } from './wire/protocol.ts';

export interface ConfinementOptions {
  user: string | undefined;
  sandbox: SandboxMode;
  /** With the sandbox: `none` gives each session a network namespace of its own (loopback only). */
  network: SessionNetwork;
  /** Absolute paths no session may see (bwrap only): directories become empty, files /dev/null. */
  hide: readonly string[];
  /** Directories sessions see read-only (bwrap only), besides the system's own. */
  readOnly: readonly string[];
  /** The host's own $HOME: the router's default working directory, which becomes the session user's home. */
  hostHome: string | undefined;
  /** Perl for the last exec (session-launch.ts); undefined where there is none (then nothing is sealed). */
  launcher: string | undefined;
  /** The host's own uid (process.getuid). */
  hostUid: number | undefined;
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

/** Where the confining tools are looked for: the system's own directories, never a session's PATH. */
const TOOL_DIRS = '/usr/bin:/bin:/usr/sbin:/sbin';

/** The system's directories, read-only in the sandbox whatever the session user may write. */
const SYSTEM_DIRS = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt', '/boot', '/srv', '/var/lib'];

/** Resolves the tools and the user once, at host start; throws an Error naming what is missing or unsafe. */
export async function loadConfinement(o: ConfinementOptions): Promise<Confinement> {
  const confined = o.user !== undefined || o.sandbox !== 'none';
  if (confined && !o.launcher) throw new Error('confining sessions needs perl (Debian perl-base) for the last step before the program; none was found');
  // Root inside a sandbox still owns every file root owns: no capability is needed for that.
  if (o.sandbox === 'bwrap' && !o.user && o.hostUid === 0) {
    throw new Error('PTY_WS_SESSION_SANDBOX=bwrap needs PTY_WS_SESSION_USER when the PTY host runs as root: a session running as root reads and writes every root-owned file in any sandbox (docs/security.md)');
  }
  const user = o.user ? await lookupUser(o.user, o.hostUid) : undefined;
  const setpriv = user ? await findTool('setpriv', 'util-linux') : undefined;
  const bwrap = o.sandbox === 'bwrap' ? await findTool('bwrap', 'bubblewrap') : undefined;
  if (bwrap) await probeSandbox(bwrap, o.network);
  const hide = [...new Set(o.hide.map((d) => path.resolve(d)))];
  const readOnly = [...new Set([...SYSTEM_DIRS, ...o.readOnly.map((d) => path.resolve(d))])];
  return {
    report: { user: user?.name ?? null, sandbox: o.sandbox, network: effectiveNetwork(o.sandbox, o.network) },
    apply(spec, program) {
      let env = spec.env;
      let cwd = spec.cwd;
      if (confined) {
        const problem = confinedEnvProblem(env);
        if (problem) throw new PtyHostError('bad_env', problem);
      }
      if (user) {
        if (cwd === o.hostHome) cwd = user.home;
        env = { ...env, HOME: user.home, USER: user.name, LOGNAME: user.name };
      }
      let argv = [program, ...spec.argv.slice(1)];
      if (o.launcher) {
        argv = launchArgv(o.launcher, program, spec.argv.slice(1));
        env = sealEnv(env);
      }
      if (user) argv = [setpriv!, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', '--', ...argv];
      if (bwrap) {
        const hidden = hide.find((d) => cwd === d || cwd.startsWith(`${d}/`));
        if (hidden) throw new PtyHostError('bad_cwd', `working directory ${cwd} is hidden from sessions by the sandbox (it is in ${hidden})`);
        argv = [bwrap, ...sandboxArgs({ hide, readOnly, network: o.network, dropCaps: !user }, cwd), '--', ...argv];
      }
      return { spec: { ...spec, argv, env, cwd }, program: argv[0]! };
    },
  };
}

interface SandboxLayout {
  hide: readonly string[];
  readOnly: readonly string[];
  network: SessionNetwork;
  /** No session user follows: the sandbox's own process keeps no capability (setpriv needs its). */
  dropCaps: boolean;
}

/**
 * The whole filesystem as it is (the user's own permissions still apply), the system's
 * directories read-only, minus what the service keeps: a hidden directory is an empty tmpfs, a
 * hidden file is /dev/null. Paths are looked at each time, so one created after the host
 * started is hidden too; one that does not exist needs nothing. `--die-with-parent` is left out
 * on purpose: a tmux/screen session's parent is its multiplexer server, and a native one already
 * ends with its PTY.
 */
function sandboxArgs(layout: SandboxLayout, cwd: string): string[] {
  const args = ['--dev-bind', '/', '/'];
  for (const d of layout.readOnly) if (kindOf(d) === 'dir') args.push('--ro-bind', d, d);
  args.push('--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-ipc');
  if (layout.network === 'none') args.push('--unshare-net');
  for (const p of layout.hide) {
    const kind = kindOf(p);
    if (kind === 'dir') args.push('--tmpfs', p);
    else if (kind === 'file') args.push('--ro-bind', '/dev/null', p);
  }
  args.push('--chdir', cwd);
  if (layout.dropCaps) args.push('--cap-drop', 'ALL');
  return args;
}

/** A real directory or file (symlinks are not followed: their target is listed on its own). */
function kindOf(p: string): 'dir' | 'file' | undefined {
  try {
    const info = lstatSync(p);
    if (info.isDirectory()) return 'dir';
    return info.isSymbolicLink() ? undefined : 'file';
  } catch {
    return undefined;
  }
}

async function lookupUser(name: string, own: number | undefined): Promise<SessionUser> {
  const r = await run('/usr/bin/getent', ['passwd', name]);
  const fields = r.code === 0 ? r.stdout.trim().split(':') : [];
  if (fields.length < 7) throw new Error(`PTY_WS_SESSION_USER: no such user ${JSON.stringify(name)} (getent passwd found none)`);
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (uid === 0) throw new Error(`PTY_WS_SESSION_USER: ${name} is root (uid 0): name an unprivileged user`);
  if (own !== 0 && own !== uid) throw new Error(`PTY_WS_SESSION_USER: the PTY host runs as uid ${own}, and only root can start sessions as another user (${name})`);
  return { name, uid, gid, home: fields[5] || '/' };
}

async function findTool(name: string, debianPackage: string): Promise<string> {
  const file = await findProgram(name, TOOL_DIRS);
  if (file) return file;
  throw new Error(`${name} is needed to confine sessions and is not installed (Debian package ${debianPackage})`);
}

/** A sandbox that cannot be built here must stop the host now, not fail every session later. */
async function probeSandbox(bwrap: string, network: SessionNetwork): Promise<void> {
  const r = await run(bwrap, [...sandboxArgs({ hide: [], readOnly: SYSTEM_DIRS, network, dropCaps: true }, '/'), '--', '/bin/true']);
  if (r.code !== 0) throw new Error(`PTY_WS_SESSION_SANDBOX=bwrap: bubblewrap cannot build a sandbox here: ${r.stderr.trim() || `exit ${r.code}`}`);
}
