// One router per state directory (docs/operations.md, "One server per state directory").
//
// The lock is an abstract Unix socket (Linux): binding a name is atomic, the kernel refuses a
// second bind while the first socket lives, and it frees the name when its process dies however
// it dies (SIGKILL, OOM, power loss leave no stale file and no pid to check for reuse). A pid
// file cannot give both: after a SIGKILL it stays behind, and deciding it is stale (is that pid
// alive, is it still the same process) races a second starter doing the same.
//
// An abstract name is per network namespace, though: containers sharing a volume each have their
// own. So the lock proper is a record lock on a file in the directory (src/adapter/exclusive-file-lock.ts),
// which the whole kernel sees and which also dies with its process; the socket is how a second
// server in the same namespace learns the holder's pid.
//
// Abstract names have no file permissions, so the name is derived from the directory's real path
// and a random key kept in the directory (mode 0600 in a 0700 directory): another user can
// neither guess the name to squat it nor connect to it. The holder answers every connection with
// who it is, so a second server names the first one's pid.

/** The runtime calls the lock needs. */
export interface StateLockPort {
  pid: number;
  realPath(path: string): Promise<string>;
  /** Reads a text file; null when it does not exist. */
  readText(path: string): Promise<string | null>;
  /** Creates the file with `text` (mode 0600) unless it exists; false when it did. */
  createNew(path: string, text: string): Promise<boolean>;
  /** Binds the abstract socket `name`, answering each connection with `greeting` then closing it; null when the name is taken. */
  bind(name: string, greeting: string): Promise<{ release(): Promise<void> } | null>;
  /** What the holder of `name` answers; null when nothing is bound; 'timeout' when it did not answer within `ms`. */
  ask(name: string, ms: number): Promise<string | null | 'timeout'>;
  /** Takes the record lock on the file `path` (created when missing); null when another process holds it. */
  lockFile(path: string): Promise<{ release(): void } | null>;
  /** This kernel's boot id (Linux), or null: a lease taken from the same state directory on another machine must expire first. */
  bootId: string | null;
}

export class StateDirInUseError extends Error {
  constructor(
    readonly stateDir: string,
    readonly holderPid: number | null,
    detail: string,
  ) {
    super(`state directory ${stateDir} is in use by another pty-ws server (${detail}): stop that one first, or give this one another PTY_WS_STATE_DIR`);
    this.name = 'StateDirInUseError';
  }
}

export interface StateLock {
  /** Names this state directory without revealing the lock's name: the instance lease records it. */
  key: string;
  /** The directory's real path. */
  dir: string;
  release(): Promise<void>;
}

const KEY_FILE = 'lock.key';
const LOCK_FILE = 'router.lock';
const ASK_MS = 2000;
/** Binding can lose a race with a holder that is exiting right now: try again this often. */
const ATTEMPTS = 3;

/** Takes the state directory's lock, or throws StateDirInUseError naming the holder. */
export async function lockStateDir(stateDir: string, who: { instanceId: string; now: number }, port: StateLockPort): Promise<StateLock> {
  const real = await port.realPath(stateDir);
  const secret = await lockKey(`${real}/${KEY_FILE}`, port);
  const name = await lockName(real, secret);
  // The same directory on the same kernel: a restart there may take the instance's lease at once,
  // since holding the lock proves its holder gone (src/router/instance-lease.ts).
  const key = await digest(`instance lease\n${real}\n${secret}\n${port.bootId ?? ''}`);
  const greeting = JSON.stringify({ pid: port.pid, instance_id: who.instanceId, state_dir: real, since: new Date(who.now).toISOString() });
  const file = await port.lockFile(`${real}/${LOCK_FILE}`);
  if (!file) {
    const holder = await describeHolder(name, port);
    throw new StateDirInUseError(real, holder.pid, holder.detail ?? 'its holder runs in another network namespace (a container sharing this directory?) and cannot be asked its pid');
  }
  for (let attempt = 1; ; attempt++) {
    const held = await port.bind(name, greeting);
    if (held) {
      return {
        key,
        dir: real,
        release: async () => {
          await held.release();
          file.release();
        },
      };
    }
    const holder = await describeHolder(name, port);
    if (holder.detail !== undefined || attempt === ATTEMPTS) {
      file.release();
      throw new StateDirInUseError(real, holder.pid, holder.detail ?? 'its lock was taken and released again while this one started');
    }
    // Nothing answers: the holder exited between our bind and our question.
  }
}

/** Who holds the socket name: its pid and a description, or no detail when nothing answers. */
async function describeHolder(name: string, port: StateLockPort): Promise<{ pid: number | null; detail?: string }> {
  const answer = await port.ask(name, ASK_MS);
  if (answer === 'timeout') return { pid: null, detail: `it did not say its pid within ${ASK_MS} ms: stopped or hung?` };
  if (answer === null) return { pid: null };
  const holder = parseGreeting(answer);
  return { pid: holder.pid, detail: holder.pid === null ? 'pid unknown' : `pid ${holder.pid}, instance ${holder.instance}, since ${holder.since}` };
}

/**
 * The pid of the server that holds the state directory now, or null when none does, as far as
 * this network namespace can ask (nothing answers, no key file, no such directory): what
 * `pty-ws token` asks before it believes the address a server left there
 * (src/adapter/node/server-address.ts).
 */
export async function stateDirHolder(stateDir: string, port: Pick<StateLockPort, 'realPath' | 'readText' | 'ask'>): Promise<number | null> {
  try {
    const real = await port.realPath(stateDir);
    const secret = (await port.readText(`${real}/${KEY_FILE}`))?.trim() ?? '';
    if (!/^[0-9a-f]{32}$/.test(secret)) return null;
    const answer = await port.ask(await lockName(real, secret), ASK_MS);
    return answer === null || answer === 'timeout' ? null : parseGreeting(answer).pid;
  } catch {
    return null;
  }
}

async function lockName(real: string, secret: string): Promise<string> {
  return `\0pty-ws/state/${await digest(`${real}\n${secret}`)}`;
}

async function lockKey(file: string, port: StateLockPort): Promise<string> {
  const fresh = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  if (await port.createNew(file, fresh)) return fresh;
  // Another starter may have created it a moment ago and not written it yet.
  for (let i = 0; i < 20; i++) {
    const key = (await port.readText(file))?.trim() ?? '';
    if (/^[0-9a-f]{32}$/.test(key)) return key;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${file}: not a pty-ws lock key (32 hex digits); remove it if no pty-ws server uses this directory`);
}

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(bytes.subarray(0, 20), (b) => b.toString(16).padStart(2, '0')).join('');
}

function parseGreeting(text: string): { pid: number | null; instance: string; since: string } {
  try {
    const g = JSON.parse(text) as { pid?: unknown; instance_id?: unknown; since?: unknown };
    return { pid: typeof g.pid === 'number' ? g.pid : null, instance: String(g.instance_id), since: String(g.since) };
  } catch {
    return { pid: null, instance: '?', since: '?' };
  }
}
