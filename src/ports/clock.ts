// Time and timers, as the code that schedules sees them: the real clock in production, a test’s own elsewhere.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** A timer that can be called off. */
export interface Timer {
  cancel(): void;
}

/** Schedules callbacks: the real clock's in production, a test's own elsewhere. */
export interface Timers {
  after(ms: number, fn: () => void): Timer;
}
