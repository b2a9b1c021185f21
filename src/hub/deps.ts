import type { Config } from '../core/config.ts';
import type { Metrics } from '../core/metrics.ts';
import type { Clock } from '../ports/clock.ts';
import type { HopTrace } from '../ports/hop-trace.ts';
import type { Logger } from '../ports/logger.ts';
import type { PtyHost } from '../ports/pty-host.ts';
import type { ScreenFactory } from '../ports/screen.ts';
import type { Store } from '../ports/store.ts';
import type { LogEntry } from '../protocol/logged-frames.ts';
import type { SessionHostCaps } from './session-host.ts';
import type { OpHandler, Session } from './types.ts';

/** Everything the session core needs from outside, passed down once. */
export interface HubDeps {
  config: Config;
  store: Store;
  pty: PtyHost;
  clock: Clock;
  logger: Logger;
  sessionHost: SessionHostCaps;
  /** Makes the terminal emulator of a session (in this thread, or in a worker). */
  screens: ScreenFactory;
  metrics: Metrics;
  /** Operations beyond the built-in PTY verbs (e.g. the A2A task operations), by `op`. */
  ops?: Record<string, OpHandler>;
  /** Whether a join's replay may show this connection this log frame (TaskStatusUpdate frames go to their subscribers only). */
  replayFilter?: (sessionId: string, clientId: string, entry: LogEntry) => boolean;
  /** Called once per session when the hub first loads it, before anyone can attach to it. */
  sessionLoaded?: (session: Session) => void;
  /**
   * Whether a new session may be placed on the named remote host, on that backend
   * (docs/remote-hosts.md): throws the client's error when not. Absent: this router takes no remote hosts.
   */
  placement?: (host: string, backend: string) => Promise<void>;
  /** A linked remote host's own default program (its login shell), for a session there that names none. */
  hostShell?: (host: string) => string | undefined;
  /** Whether the named remote host is linked now (docs/remote-hosts.md). Absent: this router takes no remote hosts. */
  remoteLinked?: (host: string) => boolean;
  /** The echo path's hop trace (src/adapter/node/hop-trace.ts, docs/performance.md): undefined unless it is on. */
  trace?: HopTrace;
}
