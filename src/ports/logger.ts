// The structured logger every part writes to (src/services/logger.ts writes JSON lines).
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  /** A field may hold a thrown value as itself (`{ error: e }`): the line keeps its stack and causes (src/services/logger.ts). */
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}
