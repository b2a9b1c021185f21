import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Clock, Logger, PtyHost, ScreenFactory, Store } from '../ports.ts';
import type { OpHandler } from './attachment.ts';
import type { SessionHostCaps } from './session-host.ts';

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
}
