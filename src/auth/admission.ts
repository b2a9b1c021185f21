// Resource limits on connections held open (docs/protocol.md §1.4, §1.6): attaches and the A2A bindings' streams, per principal and per instance, and
// upgrade attempts per principal per second. Checked before the upgrade, so a refusal is HTTP 429.
// A share's connections count against its root minter too, so minting shares does not multiply a
// principal's limit; the instance's last few places are kept for pty:admin, so an administrator
// can always get in to see and end what holds the rest (docs/security.md, attack 8).
import { BindingError } from '../protocol/errors.ts';
import { hasScope, type Principal } from './principal.ts';

export interface AdmissionLimits {
  perPrincipal: number;
  perInstance: number;
  /** Places of perInstance only a pty:admin principal may take. */
  adminReserved: number;
  attemptsPerSecond: number;
}

/** An admitted attach: `opened` once the socket is up, `closed` when it ends (both idempotent). */
export interface AdmissionTicket {
  opened(): void;
  closed(): void;
}

interface Ticket {
  /** Whose per-principal limit it counts against: its principal, and a share's root minter. */
  chargedTo: readonly string[];
  admittedAt: number;
  state: 'pending' | 'open' | 'done';
}

/**
 * An upgrade the route accepted but whose socket never opened (the client vanished mid-handshake)
 * stops holding its slot after this long; no timer needed, stale tickets are dropped when counted.
 */
const PENDING_TTL_MS = 10_000;
const WINDOW_MS = 1000;

export class AttachAdmission {
  private readonly tickets = new Set<Ticket>();
  /** Recent upgrade attempts per principal, oldest first, within the last second. */
  private readonly attempts = new Map<string, number[]>();

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly now: () => number,
  ) {}

  /** Counts an upgrade attempt by an authenticated principal; throws RATE_LIMITED over any limit. */
  admit(principal: Principal): AdmissionTicket {
    const now = this.now();
    this.countAttempt(principal.id, now);
    const minter = principal.rootMinter;
    let mine = 0;
    let minters = 0;
    let all = 0;
    for (const t of this.tickets) {
      if (t.state === 'pending' && now - t.admittedAt > PENDING_TTL_MS) {
        this.tickets.delete(t);
        continue;
      }
      all++;
      if (t.chargedTo.includes(principal.id)) mine++;
      if (minter !== undefined && t.chargedTo.includes(minter)) minters++;
    }
    const { perPrincipal, perInstance, adminReserved } = this.limits;
    const limit = `PTY_WS_MAX_CONNECTIONS_PER_PRINCIPAL=${perPrincipal}`;
    if (mine >= perPrincipal) throw limited(`principal ${principal.id} already has ${mine} open attaches and A2A streams (${limit})`);
    if (minters >= perPrincipal) throw limited(`${minter} and the shares minted from it already hold ${minters} open attaches and A2A streams (a share's count against its root minter; ${limit})`);
    const open = hasScope(principal, 'pty:admin') ? perInstance : perInstance - adminReserved;
    if (all >= open) {
      const kept = open < perInstance ? `; the last ${adminReserved} are kept for pty:admin (PTY_WS_ADMIN_RESERVED_CONNECTIONS)` : '';
      throw limited(`this instance already has ${all} open attaches and A2A streams (PTY_WS_MAX_CONNECTIONS_PER_INSTANCE=${perInstance}${kept})`);
    }
    const ticket: Ticket = { chargedTo: minter === undefined ? [principal.id] : [principal.id, minter], admittedAt: now, state: 'pending' };
    this.tickets.add(ticket);
    return {
      opened: () => {
        if (ticket.state === 'pending') ticket.state = 'open';
      },
      closed: () => {
        ticket.state = 'done';
        this.tickets.delete(ticket);
      },
    };
  }

  get openCount(): number {
    return this.tickets.size;
  }

  private countAttempt(principal: string, now: number): void {
    for (const [p, times] of this.attempts) {
      while (times.length && now - times[0]! >= WINDOW_MS) times.shift();
      if (!times.length) this.attempts.delete(p);
    }
    const times = this.attempts.get(principal) ?? [];
    this.attempts.set(principal, times);
    if (times.length >= this.limits.attemptsPerSecond) throw limited(`too many upgrade attempts by ${principal}: at most ${this.limits.attemptsPerSecond} per second`);
    times.push(now);
  }
}

function limited(message: string): BindingError {
  return new BindingError('RATE_LIMITED', message);
}
