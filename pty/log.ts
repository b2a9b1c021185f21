import type { LogLevel, Logger } from '../src/ports.ts';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** A Logger that writes one JSON object per line, dropping levels below `minLevel`. */
export function createJsonLogger(
  write: (line: string) => void,
  minLevel: LogLevel,
  base: Record<string, unknown> = {},
): Logger {
  return {
    log(level, msg, fields) {
      if (RANK[level] < RANK[minLevel]) return;
      const entry = { ts: new Date().toISOString(), level, msg, ...base, ...fields };
      write(`${JSON.stringify(entry, errorReplacer)}\n`);
    },
    child(fields) {
      return createJsonLogger(write, minLevel, { ...base, ...fields });
    },
  };
}

// Errors have no enumerable own properties and would serialize as {}.
function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
