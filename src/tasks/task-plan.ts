// What a message asks of the terminal: a command for the shell, or keystrokes.
import { A2A_ERRORS, BindingError } from '../protocol/errors.ts';
import { concatBytes } from '../core/bytes.ts';
import { base64ToBytes } from '../core/ids.ts';
import type { Part } from '../protocol/a2a.ts';

export type TaskPlan = { kind: 'command'; command: string } | { kind: 'input'; bytes: Uint8Array };

/**
 * In a session running an interactive shell, a message of text parts only is a command (the parts
 * joined by newlines). Anything else is keystrokes: a text part is a line (Enter is added unless it
 * ends with one), a `raw` part its exact bytes, a data part `{"input": "..."}` its exact text.
 */
export function planMessage(parts: readonly Part[], shell: boolean): TaskPlan {
  const unsupported = parts.find((p) => p.url !== undefined || (p.data !== undefined && !isInputData(p.data)));
  if (unsupported) {
    throw new BindingError('INVALID_REQUEST', 'parts must be text, raw (base64 bytes) or data {"input": "..."}: url parts and other data are not supported', {
      a2a: A2A_ERRORS.contentTypeNotSupported,
    });
  }
  if (shell && parts.every((p) => p.text !== undefined)) {
    const command = parts.map((p) => p.text).join('\n');
    if (!command.trim()) throw new BindingError('INVALID_REQUEST', 'the command is empty');
    return { kind: 'command', command };
  }
  return { kind: 'input', bytes: keystrokes(parts) };
}

/** The bytes a message types into the terminal (keystroke rules of planMessage). */
export function keystrokes(parts: readonly Part[]): Uint8Array {
  const enc = new TextEncoder();
  const chunks = parts.map((p, i) => {
    if (p.text !== undefined) return enc.encode(/[\r\n]$/.test(p.text) ? p.text : `${p.text}\r`);
    if (p.raw !== undefined) {
      const bytes = base64ToBytes(p.raw);
      if (!bytes) throw new BindingError('INVALID_REQUEST', `parts.${i}.raw must be base64 (RFC 4648 §4, padded)`);
      return bytes;
    }
    if (p.data !== undefined && isInputData(p.data)) return enc.encode(p.data.input);
    throw new BindingError('INVALID_REQUEST', `parts.${i} cannot be typed into a terminal`, { a2a: A2A_ERRORS.contentTypeNotSupported });
  });
  return concatBytes(chunks);
}

function isInputData(data: unknown): data is { input: string } {
  return typeof data === 'object' && data !== null && typeof (data as { input?: unknown }).input === 'string';
}
