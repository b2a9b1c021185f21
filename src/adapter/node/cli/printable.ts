// Text from the server shown on the user's terminal (labels, principals, commands): another user
// chose it, so no byte of it may act as a terminal control (docs/security.md, item 9).

// C0 and C1 controls (ESC, CSI, OSC, BEL, CR...), DEL, and the bidi overrides that reorder a line.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with every control character written out as a visible escape (`\x1b`, `\u202e`). */
export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
