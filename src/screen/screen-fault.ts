// What breaks a screen model: the first exception thrown inside its emulator (docs/architecture.md,
// "The screen model"). From then on the model is of no use; whoever waits on it hears why, and
// its owner rebuilds one from the log (src/screen/session-screen.ts).

export class ScreenFault {
  /** What broke the terminal, once something did. */
  #error: Error | null = null;
  /** The snapshots waiting for the emulator: they fail with it. */
  readonly #waiters = new Set<(e: Error) => void>();

  /** `broke` runs once, when the first exception is caught: it frees the terminal and tells the owner. */
  constructor(private readonly broke: (error: Error) => void) {}

  get error(): Error | null {
    return this.#error;
  }

  /** Runs `work` on the terminal; an exception breaks it. */
  guard(work: () => void): void {
    try {
      work();
    } catch (e) {
      this.fail(e);
    }
  }

  /** `cut()` now, or the failure that stops it (or that it caused). */
  now<T>(cut: () => T): Promise<T> {
    if (!this.#error) {
      try {
        return Promise.resolve(cut());
      } catch (e) {
        this.fail(e);
      }
    }
    return Promise.reject(this.#error!);
  }

  /** A promise settled later by the emulator: `reject` is called should it break first. */
  wait(reject: (e: Error) => void): () => void {
    this.#waiters.add(reject);
    return () => this.#waiters.delete(reject);
  }

  fail(e: unknown): void {
    if (this.#error) return;
    const error = (this.#error = e instanceof Error ? e : new Error(String(e)));
    for (const reject of this.#waiters) reject(error);
    this.#waiters.clear();
    this.broke(error);
  }
}
