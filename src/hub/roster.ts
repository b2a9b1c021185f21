// Changes to who is in a session (docs/protocol.md §5.1, §5.2): leaving, disconnecting, changing
// role. Each is audited and, when it changes the membership, announced with MembershipChanged.
import type { Role } from '../protocol/pty-payloads.ts';
import type { Logger } from '../ports/logger.ts';
import { auditMember } from './audit.ts';
import type { Member } from './member.ts';
import type { Membership } from './membership.ts';
import type { LogFrame } from './types.ts';

export interface RosterContext {
  readonly id: string;
  readonly members: Membership;
  readonly currentSequence: number;
  readonly deps: { logger: Logger };
  membershipChanged(): LogFrame;
}

/** pty.leave_session: the final MembershipChanged goes to the leaver too. */
export function leave(ctx: RosterContext, member: Member): void {
  if (drop(ctx, member, 'leave_session')) member.sendLog(ctx.membershipChanged());
}

/** The socket closed. */
export function detach(ctx: RosterContext, member: Member): void {
  if (drop(ctx, member, 'disconnect')) ctx.membershipChanged();
}

export function requestRole(ctx: RosterContext, member: Member, role: Role, requestId: string): void {
  const from = member.role;
  const d = ctx.members.changeRole(member, role);
  if (d.changed) auditMember(ctx.deps.logger, ctx.id, member, 'audit.role_change', { from, to: d.role, downgraded: d.downgraded, reason: d.reason });
  member.tell({ kind: 'RoleAssigned', clientId: member.clientId, ...d, sequence: ctx.currentSequence, id: requestId });
  if (d.changed) ctx.membershipChanged();
}

/** Takes the member out; false when it was not joined. */
function drop(ctx: RosterContext, member: Member, cause: string): boolean {
  member.dispose();
  if (!ctx.members.remove(member)) return false;
  auditMember(ctx.deps.logger, ctx.id, member, 'audit.detach', { role: member.role, cause });
  return true;
}
