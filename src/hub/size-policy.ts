// Which size a shared session has (docs/protocol.md §5.5). Every controller's latest ask is
// remembered: the size its join named, then each pty.session_resize. A resize is applied as it
// comes (the last write wins, pty-extensions-v1 §4); when the controller whose ask is in force
// leaves, disconnects or becomes an observer, the latest ask among the controllers still there is
// applied, so a phone that joined and left gives the desktop its size back. Observers never size
// the session; nor does anyone once no controller with an ask is left (the size then stays).
import type { JoinSession } from '../protocol/pty-payloads.ts';
import type { Size } from './resize-coalescer.ts';

export type { Size };

/** The size a join names: `terminal_size`, else `cols` and `rows` together. */
export function joinSize(req: Pick<JoinSession, 'terminal_size' | 'cols' | 'rows'>): Size | undefined {
  return req.terminal_size ?? (req.cols && req.rows ? { cols: req.cols, rows: req.rows } : undefined);
}

export class SizeAsks {
  /** By client id: the size and when it was asked (a counter, later is larger). */
  private readonly asks = new Map<string, { size: Size; at: number }>();
  private clock = 0;

  ask(clientId: string, size: Size): void {
    this.asks.set(clientId, { size: { cols: size.cols, rows: size.rows }, at: ++this.clock });
  }

  forget(clientId: string): void {
    this.asks.delete(clientId);
  }

  /** The latest ask among these members, or null when none of them asked. */
  latest(clientIds: Iterable<string>): Size | null {
    let best: { size: Size; at: number } | undefined;
    for (const id of clientIds) {
      const a = this.asks.get(id);
      if (a && (!best || a.at > best.at)) best = a;
    }
    return best ? best.size : null;
  }
}
