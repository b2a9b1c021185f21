// Role policy (docs/protocol.md §5.1): pure, so it is tested without sockets.
import { BindingError } from '../protocol/errors.ts';
import type { Role } from '../protocol/pty-payloads.ts';

export interface RoleRequest {
  requested: Role;
  /** False for a principal with only pty:observe: scope always wins. */
  mayControl: boolean;
  /** No connection has joined this session before. */
  fresh: boolean;
  controllers: number;
  observers: number;
  maxControllers: number;
  maxObservers: number;
}

export interface RoleDecision {
  role: Role;
  downgraded: boolean;
  reason?: string;
}

export function assignRole(r: RoleRequest): RoleDecision {
  let decision: RoleDecision;
  if (!r.mayControl) {
    // Asked explicitly, controller is refused outright, not downgraded (docs/security.md, item 7).
    if (r.requested === 'controller') throw observeOnly();
    decision = { role: 'observer', downgraded: false };
  } else if (r.fresh || r.requested === 'controller') {
    decision = r.controllers < r.maxControllers ? { role: 'controller', downgraded: false } : { role: 'observer', downgraded: true, reason: `max_controllers (${r.maxControllers}) reached` };
  } else {
    decision = { role: 'observer', downgraded: false };
  }
  if (decision.role === 'observer' && r.observers >= r.maxObservers) {
    throw new BindingError('RATE_LIMITED', `max_observers (${r.maxObservers}) reached for this session`, { fatal: true });
  }
  return decision;
}

/** pty.request_role on a joined connection. */
export function changeRole(current: Role, r: Omit<RoleRequest, 'fresh'>): RoleDecision {
  if (r.requested === current) return { role: current, downgraded: false };
  if (r.requested === 'controller') {
    if (!r.mayControl) throw observeOnly();
    if (r.controllers >= r.maxControllers) return { role: 'observer', downgraded: true, reason: `max_controllers (${r.maxControllers}) reached` };
    return { role: 'controller', downgraded: false };
  }
  if (r.observers >= r.maxObservers) throw new BindingError('RATE_LIMITED', `max_observers (${r.maxObservers}) reached for this session`);
  return { role: 'observer', downgraded: false };
}

function observeOnly(): BindingError {
  return new BindingError('PERMISSION_DENIED', 'this principal has only the pty:observe scope: it cannot be controller (join as observer to watch)', {
    metadata: { reason: 'role.controller_needs_control' },
    // In the Error frame too: a client that may fall back to watching tells this refusal apart.
    extra: { reason: 'role.controller_needs_control' },
  });
}
