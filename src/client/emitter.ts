// A small typed event emitter: portable (no node:events), and a throwing listener cannot break the
// caller's frame handling (its error is rethrown on its own microtask).

export class Emitter<E extends { [K in keyof E]: unknown[] }> {
  private readonly listeners: { [K in keyof E]?: Array<(...args: E[K]) => void> } = {};

  /** Adds a listener; returns the function that removes it. */
  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): () => void {
    (this.listeners[event] ??= []).push(listener);
    return () => {
      const list = this.listeners[event];
      const i = list?.indexOf(listener) ?? -1;
      if (i >= 0) list!.splice(i, 1);
    };
  }

  protected emit<K extends keyof E>(event: K, ...args: E[K]): void {
    for (const listener of [...(this.listeners[event] ?? [])]) {
      try {
        listener(...args);
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }
}
