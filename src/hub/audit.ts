// The audit trail: who attached, from where, with which rights, and every role change, as structured
// log lines (an observer sees everything typed and shown, docs/protocol.md §5.1). Never a token, never typed input.
import type { Principal } from '../auth/principal.ts';
import type { Logger } from '../ports/logger.ts';

/** Where a connection came from, as the transport saw it. */
export interface Peer {
  remoteAddress?: string;
  userAgent?: string;
  /** X-Forwarded-For, recorded only when a trusted proxy sits in front. */
  forwardedFor?: string;
}

const MAX_FIELD = 256;

/** The identity fields every audit line of one connection carries. */
export function auditIdentity(principal: Principal, peer: Peer): Record<string, unknown> {
  return { principal: principal.id, scopes: [...principal.scopes], ...peerFields(peer) };
}

/** The peer as log fields, each bounded so a client cannot flood the log through its headers. */
export function peerFields(peer: Peer): Record<string, string> {
  const fields: Record<string, string> = {};
  if (peer.remoteAddress) fields.remote_address = peer.remoteAddress.slice(0, MAX_FIELD);
  if (peer.userAgent) fields.user_agent = peer.userAgent.slice(0, MAX_FIELD);
  if (peer.forwardedFor) fields.forwarded_for = peer.forwardedFor.slice(0, MAX_FIELD);
  return fields;
}

/** One audit line about a member; observers see everything typed and shown, so their attach is a disclosure event. */
export function auditMember(
  fallback: Logger,
  sessionId: string,
  member: { clientId: string; audit: Logger | undefined },
  msg: 'audit.attach' | 'audit.detach' | 'audit.role_change',
  fields: Record<string, unknown>,
): void {
  const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const becomesObserver = msg !== 'audit.detach' && (fields.to ?? fields.role) === 'observer';
  (member.audit ?? fallback).log('info', msg, { session: sessionId, client_id: member.clientId, ...defined, ...(becomesObserver ? { disclosure: true } : {}) });
}
