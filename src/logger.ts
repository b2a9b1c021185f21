// Structured logs: JSON lines, or a readable line per event when the runtime's stderr is a terminal.
// The runtime adapter says where lines go (stderr) and whether it is a terminal.
import type { Logger, LogLevel } from './ports.ts';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  /** One readable line per event instead of JSON (for a person at a terminal). */
  pretty?: boolean;
  write: (line: string) => void;
}

export function jsonLogger(level: LogLevel, base: Record<string, unknown>, opts: LoggerOptions): Logger {
  const write = opts.write;
  return {
    log(lvl, msg, fields) {
      if (ORDER[lvl] < ORDER[level]) return;
      const time = new Date().toISOString();
      const all = { ...base, ...fields };
      write(opts.pretty ? `${prettyLine(time, lvl, msg, all)}\n` : `${JSON.stringify({ time, level: lvl, msg, ...all }, errorReplacer)}\n`);
    },
    child(fields) {
      return jsonLogger(level, { ...base, ...fields }, opts);
    },
  };
}

function prettyLine(time: string, level: LogLevel, msg: string, fields: Record<string, unknown>): string {
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v, errorReplacer)}`)
    .join(' ');
  return `${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${msg}${rest ? `  ${rest}` : ''}`;
}

// Errors have no enumerable own properties and would serialize as {}.
function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
