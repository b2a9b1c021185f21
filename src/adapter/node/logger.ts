// Structured JSON lines on stderr.
import type { Logger, LogLevel } from '../../ports.ts';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function jsonLogger(level: LogLevel, base: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  return {
    log(lvl, msg, fields) {
      if (ORDER[lvl] < ORDER[level]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields })}\n`);
    },
    child(fields) {
      return jsonLogger(level, { ...base, ...fields }, write);
    },
  };
}
