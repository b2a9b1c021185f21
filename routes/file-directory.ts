// Which sessions take file transfer, and into which directory (docs/files.md). The router reads
// and writes as its own user, so a transfer must be no more than what the caller could do by
// typing into the session: only a session whose program is a shell at its prompt (it could `cat`
// or `base64` the same file there), only while it has not ended nor been asked to end, and only in
// the directory the session runs (or will run) in, never one the server would guess for it.
import { recordedArgv } from '../src/hub/join-spec.ts';
import type { SessionRecord } from '../src/ports/store.ts';

/** Programs that are shells: `bash`, `/bin/zsh`, ... (by the name of the file run). */
const SHELLS = new Set(['sh', 'ash', 'dash', 'bash', 'zsh', 'ksh', 'mksh', 'yash', 'fish', 'csh', 'tcsh']);

/** An option that gives a shell its command (`-c`, also in a cluster such as `-lc`; fish's `--command`). */
const COMMAND_OPTION = /^(-[A-Za-z]*c[A-Za-z]*|--command(=.*)?)$/;

/** A word of a `command` that no shell would expand or split: the command is then just these words. */
const PLAIN_WORD = /^[A-Za-z0-9_./=+:-]+$/;

/** A session as the file routes see it: its record as this router has it, and whether it is over. */
export interface TransferTarget {
  record: Readonly<SessionRecord>;
  /** Ended, or asked to end (REST DELETE). */
  ending: boolean;
}

export type TransferDirectory = { dir: string } | { status: 403 | 409; code: string; message: string };

/** The directory the session's files go to and come from, or why there is none. */
export function transferDirectory(target: TransferTarget, defaultShell: string): TransferDirectory {
  const { record } = target;
  if (target.ending) {
    return { status: 409, code: 'files.session_ended', message: `session ${record.id} has ended or is ending: file transfer is only for a session whose program still runs` };
  }
  const argv = recordedArgv(record, { defaultShell });
  if (!runsShellAtPrompt(argv, defaultShell.split(/\s+/).filter(Boolean))) {
    return {
      status: 403,
      code: 'files.not_a_shell',
      message: `session ${record.id} runs ${JSON.stringify(argv.join(' '))}, not a shell at its prompt: file transfer is only for sessions of a shell (the default shell, or argv or command naming a shell with options only), where it gives no more than typing into them`,
    };
  }
  // A session that has started records the directory its program started in. One that has not
  // yet has a directory only if its creator named one: the server's default is not guessed here.
  if (!record.cwd) {
    return {
      status: 409,
      code: 'files.no_directory',
      message: `session ${record.id} has no recorded working directory (it has not started and was created without a cwd): join it first, or create it with a cwd`,
    };
  }
  return { dir: record.cwd };
}

/**
 * Whether `argv` runs a shell at its prompt: the server's default shell, or a shell given options
 * only (`bash --noprofile --norc`, `zsh -l`), not a command (`-c`) nor a script. A `command`
 * runs as `/bin/sh -lc COMMAND`: a shell when COMMAND is itself one, in plain words (`bash -l`).
 */
export function runsShellAtPrompt(argv: readonly string[], defaultArgv: readonly string[]): boolean {
  if (argv.length === defaultArgv.length && argv.every((a, i) => a === defaultArgv[i])) return true;
  const [program, ...args] = argv;
  if (program === undefined || !SHELLS.has(program.slice(program.lastIndexOf('/') + 1))) return false;
  const command = args.findIndex((a) => COMMAND_OPTION.test(a));
  if (command === -1) return args.every((a) => a.startsWith('-') && a !== '-' && a !== '--');
  // `sh -lc COMMAND`, nothing after it.
  if (command !== args.length - 2 || args.slice(0, command).some((a) => !a.startsWith('-'))) return false;
  const words = args[command + 1]!.trim().split(/\s+/);
  if (words[0] === 'exec') words.shift();
  return words.length > 0 && words.every((w) => PLAIN_WORD.test(w)) && runsShellAtPrompt(words, []);
}
