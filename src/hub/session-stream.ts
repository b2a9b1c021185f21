// Where a session's events go, in order: numbered and logged once, then to every member, then to
// the observers (the task runner), and its end: observers first, the Closed frame, goodbyes.
import type { Metrics } from '../core/metrics.ts';
import type { OutputBytes } from './gathered-output.ts';
import type { Lifecycle, Ending } from './lifecycle.ts';
import type { Member } from './member.ts';
import type { Membership } from './membership.ts';
import type { SessionLog } from './session-log.ts';
import type { SessionScreen } from '../screen/session-screen.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { LogFrame, SessionEvent, SessionObserver } from './types.ts';

type HostEvent = NonNullable<LogEntry['hostEvent']>;

export class SessionStream {
  private readonly observers = new Set<SessionObserver>();

  constructor(
    private readonly parts: { log: SessionLog; members: Membership; screen: SessionScreen; lifecycle: Lifecycle },
    private readonly metrics: Metrics,
    /** Serves a member that fell behind the rest of the ended session, its Closed frame and `goodbye` (flushes.ts). */
    private readonly finishBehind: (member: Member, closed: number, goodbye: string) => void,
  ) {}

  /** Until the process ends, `observer` sees its output, controller input, members leaving and its end. */
  observe(observer: SessionObserver): void {
    this.observers.add(observer);
  }

  /** A log frame for every member. */
  emit(event: Exclude<SessionEvent, { kind: 'TaskStatusUpdate' }>, hostEvent?: HostEvent): LogFrame {
    return this.parts.log.append(
      event,
      (frame) => {
        this.parts.members.broadcast(frame);
        if (event.kind === 'Output') for (const o of this.observers) o.output?.(event.data);
      },
      hostEvent,
    );
  }

  /** PTY output: an Output frame, folded into the screen once numbered. */
  output({ data, framed }: OutputBytes, hostEvent?: HostEvent): void {
    if (this.parts.lifecycle.ended) return;
    this.metrics.inc('pty_output_bytes_total', {}, data.byteLength);
    this.parts.screen.output(data, this.emit({ kind: 'Output', data, framed }, hostEvent).sequence);
  }

  /** Bytes a controller typed, for the observers. */
  input(data: Uint8Array, clientId: string): void {
    for (const o of this.observers) o.input?.(data, clientId);
  }

  /** A member is gone (left or disconnected), for the observers. */
  left(clientId: string): void {
    for (const o of this.observers) o.left?.(clientId);
  }

  /**
   * The process is over: observers hear it before the Closed frame, so frames they emit come first;
   * then every member's `binding_goodbye` says `goodbye` (the server's own stop: `server_shutdown`).
   */
  end(ending: Ending, goodbye = 'session_closed'): void {
    const { lifecycle, members, screen } = this.parts;
    if (lifecycle.ended) return;
    screen.stop();
    for (const o of this.observers) o.ended?.(ending.exitCode, ending.reason);
    this.observers.clear();
    // The goodbyes follow the Closed frame whenever it may be delivered (session-log.ts). A member
    // whose Output was dropped gets what it missed first; it starts once the session is closed
    // (below), which keeps it loaded while that is read.
    this.parts.log.append({ kind: 'Closed', ...ending }, (frame) => {
      for (const m of members.all()) {
        if (m.behind) {
          queueMicrotask(() => this.finishBehind(m, frame.sequence, goodbye));
          continue;
        }
        m.sendLog(frame);
        m.goodbye(goodbye, frame.sequence);
      }
      members.clear();
    });
    lifecycle.close(ending);
  }
}
