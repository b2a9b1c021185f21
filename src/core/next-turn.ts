// Runs `f` on the event loop's next turn, after the I/O already waiting (setImmediate where the
// runtime has it, a zero timer elsewhere): how work is split so that sockets are read in between.
export const nextTurn: (f: () => void) => void = (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate ?? ((f) => setTimeout(f, 0));
