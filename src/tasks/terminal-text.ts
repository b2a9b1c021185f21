// Terminal output as plain text for an artifact: what a reader of the screen would copy.

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC strings, then any other escape
// (intermediates and a final byte: charset selection, keypad modes, ESC 7/8, ...).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]/g;
// C0 controls other than tab and newline (carriage returns are handled per line first).
// eslint-disable-next-line no-control-regex -- likewise
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * Decodes UTF-8, drops escape sequences and control characters, turns CRLF into LF and keeps,
 * for a line rewritten with carriage returns (progress bars), only what was written last.
 */
export function terminalText(bytes: Uint8Array): string {
  const decoded = new TextDecoder('utf-8').decode(bytes).replace(ESCAPES, '');
  return decoded
    .split(/\r*\n/)
    .map((line) => {
      const cr = line.lastIndexOf('\r', line.length - 2);
      return (cr >= 0 ? line.slice(cr + 1) : line).replace(CONTROLS, '');
    })
    .join('\n');
}
