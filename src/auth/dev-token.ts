// The dev token of `pty-ws start`/`serve` when no other token source is configured
// (docs/authentication.md, "The dev token"): one token that survives restarts, so a restart does
// not lock every tab and CLI out. Only its SHA-256 is stored, in the state directory (0600, next to the
// database); the token itself is printed once, at the start that made it. A hash cannot be shown
// again, so `pty-ws token` makes a new one (rotation), which a running server picks up within a
// second. Portable: the adapter supplies the file (DevTokenFile).
import * as v from 'valibot';
import { BindingError } from '../protocol/errors.ts';
import { randomToken, sha256Hex } from '../core/ids.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { Authenticator } from './authenticator.ts';
import type { Principal } from './principal.ts';

export { DEV_TOKEN_FILE } from '../services/private-files.ts';

/** `keep`: one token across restarts (its hash in the state dir); `per-start`: a new one at every start, nothing stored. */
export type DevTokenPolicy = 'keep' | 'per-start';

/** The state directory's dev token file, through the runtime's own calls. */
export interface DevTokenFile {
  /** Its absolute path (for messages). */
  path: string;
  /** Its text, or undefined when there is none; throws the runtime's error otherwise. */
  read(): string | undefined;
  /** Replaces it at once (a new file renamed over the old one), mode 0600, creating the directory 0700. */
  write(text: string): void;
}

const StoredSchema = v.strictObject({
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
});

/** Its problem, or the hash it holds (undefined when there is no file). */
function readStored(file: DevTokenFile): { sha256?: string; problem?: string } {
  let text: string | undefined;
  try {
    text = file.read();
  } catch (e) {
    return { problem: `${file.path}: cannot read it (${String((e as { code?: unknown }).code ?? e)})` };
  }
  if (text === undefined) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  const r = v.safeParse(StoredSchema, raw);
  if (!r.success) return { problem: `${file.path}: not a dev token file ({"sha256", "created_at"}); delete it or run \`pty-ws token\` for a new token` };
  return { sha256: r.output.sha256 };
}

/** A new token: its hash replaces the stored one. Returns the token, which exists nowhere else. */
export async function rotateDevToken(file: DevTokenFile, clock: Clock): Promise<string> {
  const token = randomToken();
  file.write(`${JSON.stringify({ sha256: await sha256Hex(token), created_at: new Date(clock.now()).toISOString() })}\n`);
  return token;
}

export interface DevTokenSetup {
  auth: Authenticator;
  /** The token made at this start (to print once), or null when the stored one is kept. */
  token: string | null;
}

/**
 * The dev token for this start. With `keep` an unreadable or damaged file stops the start (its
 * message names the file): silently making a new token would lock every client out again.
 */
export async function setUpDevToken(policy: DevTokenPolicy, file: DevTokenFile, clock: Clock, logger: Logger): Promise<DevTokenSetup | { problem: string }> {
  if (policy === 'per-start') {
    const token = randomToken();
    return { auth: new DevTokenAuthenticator(await sha256Hex(token), null, clock, logger), token };
  }
  const stored = readStored(file);
  if (stored.problem !== undefined) return { problem: stored.problem };
  if (stored.sha256 !== undefined) return { auth: new DevTokenAuthenticator(stored.sha256, file, clock, logger), token: null };
  const token = await rotateDevToken(file, clock);
  return { auth: new DevTokenAuthenticator(await sha256Hex(token), file, clock, logger), token };
}

/** Re-reads the stored hash at most this often: `pty-ws token` takes effect within it. */
const REREAD_MS = 1000;

/**
 * The one dev principal (`dev`, pty:control, the operator: it may end any session), by the
 * token's hash, compared in constant time. With a file it follows rotations; open connections keep
 * the principal they had (like a token map reload). A file that became unreadable or damaged keeps
 * the last good hash (logged once).
 */
export class DevTokenAuthenticator implements Authenticator {
  readonly enforced = true;
  private readAt: number;
  private warned = false;

  constructor(
    private sha256: string,
    private readonly file: DevTokenFile | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.readAt = clock.now();
  }

  async knows(token: string): Promise<boolean> {
    return this.matches(token);
  }

  /** The lookup CompositeAuthenticator asks first. */
  async lookup(token: string): Promise<true | undefined> {
    return (await this.matches(token)) ? true : undefined;
  }

  async authenticate(token: string | null): Promise<Principal> {
    if (!token) throw new BindingError('UNAUTHENTICATED', 'a bearer token is required');
    if (!(await this.matches(token))) throw new BindingError('UNAUTHENTICATED', 'unknown bearer token');
    return this.principal();
  }

  /** The dev principal while `sha256` is the current token's hash (a rotation ends the old one). */
  async byTokenSha256(sha256: string): Promise<Principal | undefined> {
    this.refresh();
    return sha256 === this.sha256 ? this.principal() : undefined;
  }

  private principal(): Principal {
    return { id: 'dev', scopes: new Set(['pty:control']), tokenSha256: this.sha256, operator: true };
  }

  private async matches(token: string): Promise<boolean> {
    this.refresh();
    const digest = await sha256Hex(token);
    let diff = digest.length ^ this.sha256.length;
    for (let i = 0; i < digest.length; i++) diff |= digest.charCodeAt(i) ^ this.sha256.charCodeAt(i % this.sha256.length);
    return diff === 0;
  }

  private refresh(): void {
    if (!this.file || this.clock.now() - this.readAt < REREAD_MS) return;
    this.readAt = this.clock.now();
    const stored = readStored(this.file);
    if (stored.sha256 !== undefined) {
      if (stored.sha256 !== this.sha256) this.logger.log('info', 'dev token rotated: the previous one is refused from now on', { file: this.file.path });
      this.sha256 = stored.sha256;
      this.warned = false;
    } else if (!this.warned) {
      this.warned = true;
      this.logger.log('warn', 'dev token file unusable: keeping the token this server started with', { file: this.file.path, problem: stored.problem ?? 'the file was removed' });
    }
  }
}
