// What the CLI prints from a server goes to someone's terminal: a label or command another user
// chose must not be able to move the cursor, rewrite the listing or set the clipboard (OSC 52).

/**
 * C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidirectional
 * overrides/isolates (which reorder what is shown): the characters a terminal acts on or that hide text.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, '0');
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** `text` with every unsafe character shown as an escape (`\e`, `\n`, `\x07`, `\u202e`) and `\` doubled. */
export function printable(text: string): string {
  return text.replaceAll('\\', '\\\\').replace(UNSAFE, (c) => NAMED[c] ?? (c <= '\u00ff' ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`));
}

/**
 * JSON text that is safe on a terminal and still the same JSON: JSON.stringify already escapes
 * C0 controls in strings (and its own newlines between them stay); the others become \u escapes,
 * which a JSON parser reads back unchanged.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(UNSAFE_IN_JSON, (c) => `\\u${hex(c, 4)}`);
}
