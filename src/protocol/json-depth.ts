// How deeply a client frame may nest (docs/protocol.md §1.6): checked on the text,
// before JSON.parse, in one pass without recursion, so a hostile frame costs no more than its length.

/** The envelope is level 1, its payload level 2; nothing the binding defines comes close to this. */
export const MAX_JSON_DEPTH = 32;

/** True when the JSON text opens more than `max` objects/arrays inside one another. */
export function nestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
  return false;
}
