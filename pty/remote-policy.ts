// What a remote host offers and allows, resolved once at its start from its settings
// (pty/wire/host-config.ts RemoteLink): the backends it offers of those found here, and its policy, whose
// default is the login shell of the user its sessions run as (docs/remote-hosts.md).
import { userInfo } from 'node:os';
import type { Backend } from './backends/backend.ts';
import { run } from './backends/exec.ts';
import type { RemoteLink } from './wire/host-config.ts';
import { loginShellPatterns, shellOfPasswdLine, type HostPolicy } from './host-policy.ts';

/** The backends named by `--backends`, each one found here; throws naming one that is not. */
export function offeredBackends(found: readonly Backend[], remote: RemoteLink): Backend[] {
  if (remote.backends === undefined) return [...found];
  const missing = remote.backends.filter((name) => !found.some((b) => b.name === name));
  if (missing.length > 0) throw new Error(`--backends: ${missing.join(', ')} not available on this machine (found: ${found.map((b) => b.name).join(', ')})`);
  return found.filter((b) => remote.backends!.includes(b.name));
}

/**
 * `--allow-command`, or else the login shell (`getent passwd`, the 7th field) of the session user,
 * or of the host's own user when sessions run as it; `/bin/sh` when the entry names none.
 */
export async function remotePolicy(remote: RemoteLink, sessionUser: string | undefined): Promise<HostPolicy> {
  if (remote.allowCommands) return { host: remote.name, allowed: remote.allowCommands };
  const user = sessionUser ?? userInfo().username;
  const entry = await run('/usr/bin/getent', ['passwd', user]);
  const shell = (entry.code === 0 ? shellOfPasswdLine(entry.stdout) : undefined) ?? '/bin/sh';
  return { host: remote.name, allowed: loginShellPatterns(shell), defaultShell: `${shell} -l` };
}
