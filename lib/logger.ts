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
}

/** A logger that drops everything (the default). */
export const silentLogger: Logger = Object.freeze({ traces: false, log() {} });

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
