// A member's flushes (docs/protocol.md §6): the join's (live or of an ended session), a requested
// Keyframe and a lagged member's repaint. Each holds the member's live frames while it reads,
// then releases them after the Keyframe, so replay + live never skip or repeat a frame.
import { PtyError } from '../protocol/errors.ts';
import type { ScreenSnapshot } from '../ports/screen.ts';
import type { JoinSession } from '../protocol/pty-payloads.ts';
import type { HubDeps } from './deps.ts';
import { checkJoinSpec, withoutFields } from './join-spec.ts';
import { processStarter, type StarterContext } from './process-start.ts';
import { checkJoinBackend } from './session-host.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { Member } from './member.ts';
import type { Membership } from './membership.ts';
import type { RoleDecision } from './roles.ts';
import { sendReplay, type Replay, type ReplayOutcome } from './replay.ts';
import type { SessionLog } from './session-log.ts';
import type { SessionScreen } from '../screen/session-screen.ts';
import type { LogFrame, Unicast } from './types.ts';
import { auditMember } from './audit.ts';

type ReplayFrom = Replay['from'];

/** The parts of a session a flush reads. */
export interface FlushContext extends StarterContext {
  readonly id: string;
  readonly log: SessionLog;
  readonly screen: SessionScreen;
  readonly members: Membership;
  readonly lifecycle: Lifecycle;
  readonly deps: HubDeps;
  /** Logs and sends the session's MembershipChanged. */
  membershipChanged(): LogFrame;
  retireIfIdle(): void;
}


/** A join: checked, given a role, the process started if need be, then the flush (docs/protocol.md §5.4, §6.1). */
export async function join(ctx: FlushContext, member: Member, req: JoinSession, replayFrom: ReplayFrom, requestId: string): Promise<void> {
  const record = ctx.lifecycle.record;
  // A session that has started (or ended) runs on one backend: the join is checked against what
  // this server runs first (session_backend.not_implemented), then against that one.
  if (record.state !== 'created') checkJoinBackend(ctx.deps.sessionHost, record, req);
  const ignored = checkJoinSpec(record, req, member.rights, ctx.deps.config);
  if (!ctx.lifecycle.ended) {
    const decision = ctx.members.decide(member, req.role, !record.hadMember);
    const before = ctx.log.current;
    await ctx.lifecycle.ensureStarted(withoutFields(req, ignored), decision.firstController, processStarter(ctx));
    // The start may have seen the process end already.
    if (!ctx.lifecycle.ended) return joinLive(ctx, member, { ...decision, ignored }, { from: replayFrom, maxBytes: req.replay_max_bytes }, requestId);
    // The process ended while it was starting: show this joiner everything it printed.
    replayFrom ??= before;
  }
  return joinEnded(ctx, member, ignored, { from: replayFrom, maxBytes: req.replay_max_bytes }, requestId);
}

/** RoleAssigned → replay → the join's MembershipChanged → Keyframe → what was held (docs/protocol.md §6.1). */
async function joinLive(ctx: FlushContext, member: Member, decision: RoleDecision & { ignored: string[] }, replay: Replay, requestId: string): Promise<void> {
  member.hold();
  ctx.members.admit(member, decision.role);
  ctx.lifecycle.joined();
  member.tell({ kind: 'RoleAssigned', clientId: member.clientId, ...decision, sequence: ctx.log.current, id: requestId });
  auditMember(ctx.deps.logger, ctx.id, member, 'audit.attach', { role: decision.role, downgraded: decision.downgraded, reason: decision.reason, replay_from: replay.from ?? undefined });

  const joined = ctx.membershipChanged();
  // Asked for right after the MembershipChanged is numbered, so the anchor is at most that frame.
  const screen = cut(ctx.screen.snapshot('join'));
  // The replay precedes the Keyframe on the wire: sent while the screen is still cutting it.
  const replayed = await sendReplay(ctx, member, replay, joined.sequence, requestId, () => ctx.members.has(member));
  if (!reachedEnd(replayed)) {
    await ctx.log.deliverable(joined.sequence);
    member.sendBeforeKeyframe([joined]);
  }
  const snap = await screen;
  if (replayed === 'cut') {
    toldLagged(member, snap, joined.sequence);
    member.fellBehind();
  }
  member.release([], keyframeOr(snap, joined.sequence, requestId));
}

/** The replay sent every frame up to its end (the join's MembershipChanged, an ended session's Closed). */
function reachedEnd(replayed: ReplayOutcome): boolean {
  return replayed === 'sent' || replayed === 'crossed';
}

/** A replay cut short left a gap before the Keyframe: the client repaints from it (pty-extensions-v1 §5). */
function toldLagged(member: Member, snap: ScreenSnapshot | PtyError, sequence: number): void {
  member.tell({ kind: 'OutputLagged', anchor: snap instanceof PtyError ? sequence : snap.anchor, sequence });
}

/** The Keyframe a flush ends with, or the KEYFRAME_UNAVAILABLE in its place. */
function keyframeOr(snap: ScreenSnapshot | PtyError, sequence: number, id?: string): Unicast {
  return snap instanceof PtyError ? { kind: 'PtyError', error: snap, sequence, id } : { kind: 'Keyframe', snapshot: snap, sequence, id };
}

/**
 * A Keyframe asked for (a join's, a request's, a lagged member's) that cannot be cut: no screen, or
 * its emulator failed. The client gets KEYFRAME_UNAVAILABLE in its place (pty-extensions-v1 §5,
 * docs/protocol.md §7.4) and its held frames flow on.
 */
function cut(pending: Promise<ScreenSnapshot> | null): Promise<ScreenSnapshot | PtyError> {
  if (!pending) return Promise.resolve(new PtyError('KEYFRAME_UNAVAILABLE', 'the session has no screen to cut a Keyframe from'));
  return pending.catch((e: unknown) => new PtyError('KEYFRAME_UNAVAILABLE', `no Keyframe could be cut: ${e instanceof Error ? e.message : String(e)}`));
}

/** An ended session can still be read: the frames asked for (at least its Closed), its last screen, goodbye. */
async function joinEnded(ctx: FlushContext, member: Member, ignored: string[], replay: Replay, requestId: string): Promise<void> {
  const last = ctx.log.current;
  member.role = 'observer';
  member.tell({ kind: 'RoleAssigned', clientId: member.clientId, role: 'observer', downgraded: false, reason: 'the session has ended', ignored, sequence: last, id: requestId });
  auditMember(ctx.deps.logger, ctx.id, member, 'audit.attach', { role: 'observer', session_state: 'closed', replay_from: replay.from ?? undefined });
  // Not a member of the ended session: it is served this one flush, to the end.
  await readEnded(ctx, member, replay, last, { requestId, goodbye: 'session_closed', keyframe: 'always' });
}

/**
 * A member whose Output was dropped (it fell behind) when its session ended (docs/protocol.md
 * §6.4): it is not left with a silent gap before the Closed frame. When all it missed comes after
 * its cursor it gets the rest of the log, read as it takes it; otherwise (another log frame reached
 * it after the first Output dropped), or if it stops reading for the replay's stall time, or the
 * rest cannot be read, `PTY_OUTPUT_LAGGED` and a Keyframe of the last screen follow the Closed
 * frame, as for a replay cut short. Then its goodbye.
 */
export async function finishBehind(ctx: FlushContext, member: Member, closed: number, goodbye: string): Promise<void> {
  const from = member.missedOnlyTail ? member.lastSequence : undefined;
  member.resumeOutput();
  await readEnded(ctx, member, { from, maxBytes: undefined }, closed, { goodbye, keyframe: 'if-cut' }).catch((e: unknown) => {
    ctx.deps.logger.log('warn', 'the rest of an ended session could not be sent to a member that fell behind', { session: ctx.id, client_id: member.clientId, error: e });
    member.tell({ kind: 'OutputLagged', anchor: member.lastSequence, sequence: closed });
    member.goodbye(goodbye, closed);
  });
}

/**
 * The frames in (replay.from, last] as the member takes them (at least the Closed frame, `last`),
 * its last screen where asked for or the replay was cut short (then after PTY_OUTPUT_LAGGED), and
 * `goodbye`. The session stays loaded meanwhile.
 */
async function readEnded(ctx: FlushContext, member: Member, replay: Replay, last: number, opts: { requestId?: string; goodbye: string; keyframe: 'always' | 'if-cut' }): Promise<void> {
  const { requestId } = opts;
  ctx.lifecycle.reading(true);
  try {
    const replayed = await sendReplay(ctx, member, replay, last, requestId, () => true);
    // At least its Closed, also after a replay cut short.
    const frames = reachedEnd(replayed) ? [] : await ctx.log.framesAfter(last - 1);
    await ctx.log.deliverable(last);
    // A replay across a lost run is followed by a Keyframe (DECISIONS §18).
    if (replayed === 'sent' && opts.keyframe === 'if-cut') {
      member.goodbye(opts.goodbye, last);
      return;
    }
    // A retired session's last screen comes back from the log, for this reader only.
    await ctx.screen.ensureRebuilt();
    const snap = await cut(ctx.screen.snapshot('join'));
    if (replayed === 'cut' || (replayed === 'none' && opts.keyframe === 'if-cut')) {
      member.sendBeforeKeyframe(frames.splice(0));
      toldLagged(member, snap, last);
    }
    member.release(frames, keyframeOr(snap, last, requestId));
    member.goodbye(opts.goodbye, last);
  } finally {
    ctx.lifecycle.reading(false);
    ctx.retireIfIdle();
  }
}

/** pty.request_keyframe: a Keyframe for this member only. */
export async function keyframeFor(ctx: FlushContext, member: Member, requestId: string): Promise<void> {
  member.hold();
  const snap = await cut(ctx.screen.snapshot('request'));
  member.release([], keyframeOr(snap, member.lastSequence, requestId), snap instanceof PtyError ? 0 : snap.anchor);
}

/** A lagged member's socket drained: tell it what it lost, then repaint it (docs/protocol.md §6.4). */
export async function recoverLagged(ctx: FlushContext, member: Member): Promise<void> {
  if (!ctx.screen.exists || !ctx.members.has(member)) return;
  member.hold();
  ctx.deps.metrics.inc('lagged_clients_total');
  const snap = await cut(ctx.screen.snapshot('lag'));
  // Output was dropped; without a Keyframe no repaint can follow: the client's screen stays unknown, and it is told.
  toldLagged(member, snap, member.lastSequence);
  member.release([], keyframeOr(snap, member.lastSequence), snap instanceof PtyError ? 0 : snap.anchor);
}
