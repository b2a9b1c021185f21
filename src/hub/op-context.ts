// What an operation registered from outside the hub (the A2A task ops) gets: the connection it
// arrived on, seen through OpContext (src/hub/types.ts).
import type { Principal } from '../auth/principal.ts';
import { parsePayload, type ClientEnvelope } from '../protocol/envelope.ts';
import type { LogFrame, OpContext, Session } from './types.ts';

/** The connection's side of an OpContext. */
export interface OpConnection {
  principal(): Principal;
  clientId(): string;
  serviceParameters(): Record<string, unknown> | undefined;
  send(op: string, id: string, payload: unknown, sequence: number): void;
  sendLog(frame: LogFrame): void;
  onEnded(listener: () => void): void;
}

export function opContext(conn: OpConnection, session: Session, frame: ClientEnvelope): OpContext {
  return {
    session,
    frame,
    principal: conn.principal(),
    clientId: conn.clientId(),
    get serviceParameters() {
      return conn.serviceParameters();
    },
    payload: (schema) => parsePayload(schema, frame),
    reply: (op, payload, id = frame.id) => conn.send(op, id, payload, session.currentSequence),
    sendLog: (log) => conn.sendLog(log),
    onClose: (listener) => conn.onEnded(listener),
  };
}
