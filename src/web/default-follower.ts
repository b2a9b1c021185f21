// The page follows the live default session (docs/architecture.md, "The default session"): a tmux
// one outlives a restart and the page's client rejoins it by itself; a native one ends with the
// server, and the page moves on to the default session the next start makes, once the server
// answers, instead of staying on the ended one.
import type { SessionInfo } from '../client/sessions-api.ts';

export interface DefaultFollowerDeps {
  /** The instance's sessions; rejects while the server does not answer. */
  list(): Promise<SessionInfo[]>;
  /** Attach to this session instead. */
  go(sessionId: string): void;
  /** Says what the page waits for. */
  waiting(text: string): void;
  intervalMs?: number;
  /** Give up after this long (nobody started the server again). */
  patienceMs?: number;
}

/** Closed reasons after which nobody wants a new shell opened for them: the session was ended on purpose. */
const ENDED_ON_PURPOSE = new Set(['normal', 'killed']);

export class DefaultFollower {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private following: string | null = null;

  constructor(private readonly deps: DefaultFollowerDeps) {}

  /** `ended` (a default session the page showed) closed for `reason`: follow it to its successor. */
  ended(ended: SessionInfo | undefined, reason: string): void {
    if (!ended?.default_session || ENDED_ON_PURPOSE.has(reason)) return;
    this.stop();
    this.following = ended.session_id;
    this.deps.waiting("Waiting for the server's default session…");
    const until = Date.now() + (this.deps.patienceMs ?? 10 * 60_000);
    const poll = async () => {
      const next = await this.deps.list().then(
        (sessions) => sessions.filter((s) => s.default_session && s.state !== 'closed' && s.session_id !== ended.session_id).at(-1),
        () => undefined,
      );
      if (this.following !== ended.session_id) return;
      if (next) {
        this.following = null;
        return this.deps.go(next.session_id);
      }
      if (Date.now() < until) this.timer = setTimeout(() => void poll(), this.deps.intervalMs ?? 1000);
    };
    void poll();
  }

  /** The page attached elsewhere: nothing to follow any more. */
  stop(): void {
    clearTimeout(this.timer);
    this.following = null;
  }
}
