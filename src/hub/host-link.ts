// The router's link to the PTY host: whether it is reachable, and the grace its sessions get while
// it is not (PTY_HOST_LOSS_GRACE_MS, docs/architecture.md).

/**
 * - `up`: reachable.
 * - `lost`: unreachable; when `giveUp` fires (the grace after the first loss) its sessions are given up.
 * - `restoring`: back, and what it runs is being re-adopted.
 * - `down`: unreachable with no grace running: its sessions were given up, or a re-adoption failed
 *   (a loss follows, and the next restore tries again).
 */
type Phase = { state: 'up' } | { state: 'lost'; giveUp: ReturnType<typeof setTimeout> } | { state: 'restoring' } | { state: 'down' };

export class HostLink {
  private now: Phase = { state: 'up' };

  constructor(private readonly graceMs: number) {}

  /** False between losing the host and re-adopting what a host runs again. */
  get reachable(): boolean {
    return this.now.state === 'up';
  }

  /** `giveUp` runs once the grace is over, unless the host is back before. A loss while the grace runs keeps it: it counts from the first. */
  lost(giveUp: () => void): void {
    if (this.now.state === 'lost') return;
    const timer = setTimeout(() => {
      this.now = { state: 'down' };
      giveUp();
    }, this.graceMs);
    this.now = { state: 'lost', giveUp: timer };
  }

  /** A host is reachable again: what it runs is being re-adopted. */
  restoring(): void {
    this.stop();
    this.now = { state: 'restoring' };
  }

  /** The re-adoption is over: the host is up if it worked and was not lost again meanwhile. */
  restored(ok: boolean): void {
    if (this.now.state === 'restoring') this.now = { state: ok ? 'up' : 'down' };
  }

  /** The router stops: no grace runs on. */
  stop(): void {
    if (this.now.state === 'lost') clearTimeout(this.now.giveUp);
  }
}
