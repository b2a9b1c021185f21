// How a session's own environment reaches its program and nothing else (docs/security.md, item 2).
//
// Between the PTY host and a session's program run tools as the host's user (root when sessions
// run as another user): Perl closing inherited descriptors, bubblewrap, setpriv, the tmux server
// and the screen server. The dynamic loader and libc read variables such as LD_PRELOAD,
// GCONV_PATH or MALLOC_* in every one of them, so a session's variables must never be theirs.
// They travel sealed, each name behind a prefix nothing interprets, and the last exec, made as
// the session's user inside its sandbox, unseals them: `launchArgv` is that step.

/** The prefix a sealed variable's name carries. */
export const SEALED = '__pty_ws_env_';

/**
 * The session's variables as the tools in between may see them: every name sealed except TERM,
 * which node-pty and the multiplexers set for the terminal themselves and which none of the
 * tools reads as a path or a library.
 */
export function sealEnv(env: Record<string, string>): Record<string, string> {
  const sealed: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) sealed[name === 'TERM' ? name : SEALED + name] = value;
  return sealed;
}

/** Unseals the session's variables over what the multiplexer set (TMUX, STY, WINDOW...). */
const UNSEAL = `for (grep { index($_, "${SEALED}") == 0 } keys %ENV) { $ENV{substr($_, ${SEALED.length})} = delete $ENV{$_} }`;

/**
 * Closes every descriptor above 2, then execs argv exactly: node-pty leaves PTY masters
 * inheritable (node-pty #657, see terminal-spawn.ts), and a multiplexer server may hold some too.
 */
const CLOSE_AND_EXEC = `
opendir(my $d, "/proc/self/fd") or die "pty-ws: /proc/self/fd: $!\\n";
my @fds = grep { /^\\d+$/ && $_ > 2 } readdir $d;
closedir $d;
POSIX::close($_) for @fds;
exec { $ARGV[0] } @ARGV or die "pty-ws: cannot run $ARGV[0]: $!\\n";
`;

/** Perl closing inherited descriptors, then running `program` with `args`. */
export function closingExecArgv(perl: string, program: string, args: readonly string[]): string[] {
  return [perl, '-mPOSIX', '-e', CLOSE_AND_EXEC, '--', program, ...args];
}

/** The last exec, as the session's user: unseal the environment, close descriptors, run `program`. */
export function launchArgv(perl: string, program: string, args: readonly string[]): string[] {
  return [perl, '-mPOSIX', '-e', UNSEAL + CLOSE_AND_EXEC, '--', program, ...args];
}
