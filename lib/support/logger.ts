/**
 * A small pluggable logger. Silent by default; `ACP_WIRE_LOG` or an option turns it on.
 *
 * @packageDocumentation
 */

/** Severity of a log record. `trace` is the per-line wire trace. */
export type LogLevel = 'trace' | 'debug' | 'warn' | 'error';

/**
 * Receives log records. Implementations must not throw.
 *
 * @remarks `trace` records are only produced when {@link Logger.traces} is true, so a logger
 * that does not trace costs nothing on the hot path.
 */
export interface Logger {
  /** Whether this logger wants a `trace` record for every line sent and received. */
  readonly traces: boolean;
  /** Records one event. */
  log(level: LogLevel, message: string): void;
  /**
   * Whether a record of `level` would be written. Optional: without it, acp-wire assumes every
   * level is. acp-wire asks before building a costly record (one that describes what a peer sent),
   * so a silent logger costs nothing.
   */
  isEnabled?(level: LogLevel): boolean;
}

/** A logger that drops everything (the default). */
export const silentLogger: Logger = Object.freeze({ traces: false, log() {}, isEnabled: () => false });

const RANK: Record<LogLevel, number> = { trace: 0, debug: 1, warn: 2, error: 3 };

/** Options of {@link createStderrLogger}. */
export interface StderrLoggerOptions {
  /** The lowest level written. Default `warn`. */
  level?: LogLevel;
  /** A label written in every record, e.g. the component's name. */
  name?: string;
  /** Where records go. Default `process.stderr`. Tests pass their own sink. */
  write?: (text: string) => void;
}

/**
 * A logger that writes one line per record to stderr: `time name level message`.
 *
 * @throws RangeError if `level` is not a {@link LogLevel}
 * @example
 * ```ts
 * const connection = connectStdio({ logger: createStderrLogger({ level: 'trace', name: 'agent' }) });
 * ```
 */
export function createStderrLogger(options: StderrLoggerOptions = {}): Logger {
  const level = options.level ?? 'warn';
  if (!Object.hasOwn(RANK, level)) throw new RangeError(`level must be one of ${Object.keys(RANK).join(', ')}`);
  const min = RANK[level];
  const prefix = options.name === undefined ? '' : ` ${options.name}`;
  const write = options.write ?? ((text: string) => void process.stderr.write(text));
  return {
    traces: min === 0,
    log(recordLevel, message) {
      if (RANK[recordLevel] < min) return;
      write(`${new Date().toISOString()}${prefix} ${recordLevel} ${message}\n`);
    },
    isEnabled: (recordLevel) => RANK[recordLevel] >= min,
  };
}

/**
 * The logger a connection uses when none is given: silent, unless the environment variable
 * `ACP_WIRE_LOG` names a level (`trace` writes every line sent and received to stderr).
 */
export function defaultLogger(name?: string): Logger {
  const level = process.env.ACP_WIRE_LOG;
  if (level === undefined || !Object.hasOwn(RANK, level)) return silentLogger;
  return createStderrLogger({ level: level as LogLevel, name });
}

/**
 * Logs the message `describe()` builds, only if `logger` would write a record of `level`: nothing
 * is computed for a silent logger.
 *
 * @internal
 */
export function logLazily(logger: Logger, level: LogLevel, describe: () => string): void {
  if (logger.isEnabled?.(level) === false) return;
  logger.log(level, describe());
}

/** The longest description of a peer's value that goes into a log record, in characters. */
export const BRIEF_LIMIT = 200;

const STOP = Symbol('stop');

/**
 * A JSON-like description of `value` cut after `maxChars` characters (then ending `…`), built
 * without ever serializing more than that: a 10 MB value costs what its first 200 characters cost.
 *
 * @remarks Never throws: a value that cannot be walked (a throwing getter) is described by its
 * `Object.prototype.toString`. Nesting deeper than 20 levels is shown as `…`.
 * @internal
 */
export function briefly(value: unknown, maxChars = BRIEF_LIMIT): string {
  let out = '';
  const append = (text: string): void => {
    out += text.length > maxChars ? text.slice(0, maxChars) : text;
    if (out.length > maxChars) throw STOP;
  };
  const walk = (item: unknown, depth: number): void => {
    if (typeof item === 'string') return append(JSON.stringify(item.length > maxChars ? item.slice(0, maxChars) : item));
    if (typeof item !== 'object' || item === null) return append(String(item));
    if (depth >= 20) return append('…');
    if (Array.isArray(item)) {
      append('[');
      for (let i = 0; i < item.length; i++) {
        if (i > 0) append(',');
        walk(item[i], depth + 1);
      }
      return append(']');
    }
    append('{');
    let first = true;
    for (const key in item) {
      if (!Object.hasOwn(item, key)) continue;
      if (!first) append(',');
      first = false;
      walk(key, depth + 1);
      append(':');
      walk((item as Record<string, unknown>)[key], depth + 1);
    }
    append('}');
  };
  try {
    walk(value, 0);
  } catch (stopped) {
    if (stopped !== STOP) return Object.prototype.toString.call(value);
    return `${out.slice(0, maxChars)}…`;
  }
  return out;
}
