// Cross-session multiplexing is forbidden (docs/protocol.md §1.6, docs/security.md attack 7): a frame's
// payload may name only the connection's own session, in whichever field and spelling it uses —
// `session_id`, `sessionId`, `context_id`, `contextId` (A2A: the context is the session), at any
// depth (a ListTasks `filter`, a message, its metadata). Silently ignoring such a field would
// answer about the bound session as if it were the other one.
const SESSION_FIELDS = new Set(['session_id', 'sessionId', 'context_id', 'contextId']);

/** The path of the first field naming another session (`payload.filter.context_id`), or null. */
export function foreignSessionField(payload: unknown, sessionId: string): string | null {
  return walk(payload, sessionId, 'payload');
}

function walk(value: unknown, sessionId: string, path: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], sessionId, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  for (const [key, v] of Object.entries(value)) {
    if (SESSION_FIELDS.has(key) && v !== sessionId && v !== null && v !== undefined) return `${path}.${key}`;
    const found = walk(v, sessionId, `${path}.${key}`);
    if (found) return found;
  }
  return null;
}
