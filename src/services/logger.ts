// Structured logs: JSON lines, or a readable line per event when the runtime's stderr is a terminal.
// The runtime adapter says where lines go (stderr) and whether it is a terminal.
// An error is logged as itself (`{ error: e }`): its name, message, stack and cause chain go in
// the line, so a fault can be traced from the log alone. What a client is told is decided
// elsewhere (src/protocol/errors.ts toBindingError) and never carries any of it.
import type { Logger, LogLevel } from '../ports/logger.ts';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Causes logged under an error at most: a cycle of causes must not loop. */
const MAX_CAUSES = 8;

export interface LoggerOptions {
  /** One readable line per event instead of JSON (for a person at a terminal). */
  pretty?: boolean;
  write: (line: string) => void;
}

/** An error as a log line carries it. */
interface LoggedError {
  name: string;
  message: string;
  stack?: string;
  /** Node's system error code (`ENOENT`, `SQLITE_BUSY`), when it has one. */
  code?: string | number;
  /** The error's cause: a LoggedError when it is an Error. */
  cause?: unknown;
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

/** Any thrown value as a log field: an Error with its stack and causes, anything else as it is. */
function loggedError(e: unknown, depth = 0): unknown {
  if (!(e instanceof Error)) return e;
  const out: LoggedError = { name: e.name, message: e.message };
  if (e.stack) out.stack = e.stack;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (e.cause !== undefined && depth < MAX_CAUSES) out.cause = loggedError(e.cause, depth + 1);
  return out;
}

function prettyLine(time: string, level: LogLevel, msg: string, fields: Record<string, unknown>): string {
  const stacks: string[] = [];
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      if (v instanceof Error) {
        stacks.push(...causeChain(v).map((e, i) => `${i === 0 ? '' : 'caused by: '}${e.stack ?? `${e.name}: ${e.message}`}`));
        return `${k}=${JSON.stringify(`${v.name}: ${v.message}`)}`;
      }
      return `${k}=${typeof v === 'string' ? v : JSON.stringify(v, errorReplacer)}`;
    })
    .join(' ');
  const head = `${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${msg}${rest ? `  ${rest}` : ''}`;
  return [head, ...stacks.flatMap((s) => s.split('\n').map((l) => `    ${l}`))].join('\n');
}

function causeChain(e: Error): Error[] {
  const chain = [e];
  for (let c = e.cause; c instanceof Error && chain.length <= MAX_CAUSES; c = c.cause) chain.push(c);
  return chain;
}

// Errors have no enumerable own properties and would serialize as {}.
function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? loggedError(value) : value;
}
