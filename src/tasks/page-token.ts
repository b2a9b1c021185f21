// ListTasks page tokens: opaque to clients, the position after the last task of a page.
import { BindingError } from '../protocol/errors.ts';
import { base64urlEncode, base64urlToText } from '../core/ids.ts';
import type { TaskCursor } from '../ports/task-store.ts';

export function encodePageToken(c: TaskCursor): string {
  return base64urlEncode(new TextEncoder().encode(JSON.stringify([c.statusTimestamp, c.id])));
}

export function decodePageToken(token: string): TaskCursor {
  const text = base64urlToText(token);
  try {
    const v: unknown = text === null ? null : JSON.parse(text);
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { statusTimestamp: v[0], id: v[1] };
  } catch {
    // not JSON: refused below like any other foreign token
  }
  throw new BindingError('INVALID_REQUEST', 'page_token is not one this server issued: pass next_page_token from a previous ListTasks answer');
}
