/**
 * The shape of one `acp-wire` subcommand, and how a subcommand reports on stderr.
 *
 * @packageDocumentation
 */
import { getSystemErrorMap } from 'node:util';
import type { EarlyComponents } from './early-spawn';

/** What the `acp-wire` program hands a subcommand besides its arguments. */
export interface CliContext {
  /** `conduct`'s components, spawned before the rest of the command line was loaded. */
  readonly early?: EarlyComponents | undefined;
}

/**
 * One `acp-wire <name> …` subcommand. The table of subcommands is in `lib/cli/commands.ts`; the
 * dispatcher (`runCli`) handles `--help`/`-h`, usage errors (exit 2) and operating-system errors
 * (one line, exit 1) for every subcommand alike.
 */
export interface Subcommand {
  /** The word after `acp-wire`, e.g. `conduct`. */
  readonly name: string;
  /** One line for `acp-wire --help`. */
  readonly summary: string;
  /** The whole `acp-wire <name> --help` text (starts with a `usage:` line). */
  readonly help: string;
  /**
   * Runs with the arguments that follow the name; resolves with the exit code. `context` holds
   * what the program started before it loaded the subcommand (nothing, unless it is `conduct`).
   *
   * @throws UsageError for bad usage (nothing was started); an operating-system error (with `code`
   * and `syscall`, e.g. EADDRINUSE from `listen`) is reported as one line
   */
  run(argv: readonly string[], context?: CliContext): Promise<number>;
}

/** Writes one line on stderr, prefixed `acp-wire <command>: ` (or `acp-wire: `). */
export function report(command: string | undefined, message: string): void {
  process.stderr.write(`acp-wire${command === undefined ? '' : ` ${command}`}: ${message}\n`);
}

/** A Node operating-system error: a string `code` (`EADDRINUSE`) and the failed `syscall`. */
interface SystemError extends Error {
  code: string;
  syscall: string;
  errno?: number;
  address?: string;
  port?: number;
  path?: string;
}

/** Whether `error` is an operating-system error Node raised (it has a string `code` and a `syscall`). */
export function isSystemError(error: unknown): error is SystemError {
  return (
    error instanceof Error &&
    typeof (error as Partial<SystemError>).code === 'string' &&
    typeof (error as Partial<SystemError>).syscall === 'string'
  );
}

/**
 * One line for a person: what could not be done and why, e.g.
 * `cannot listen on 127.0.0.1:4000: address already in use`.
 */
export function describeSystemError(error: SystemError): string {
  const cause = (error.errno !== undefined && getSystemErrorMap().get(error.errno)?.[1]) || error.code;
  if ((error.syscall === 'listen' || error.syscall === 'bind') && error.port !== undefined) {
    return `cannot listen on ${error.address ?? ''}:${error.port}: ${cause}`;
  }
  const target = error.path ?? (error.port !== undefined ? `${error.address ?? ''}:${error.port}` : undefined);
  return `${error.syscall}${target === undefined ? '' : ` ${target}`} failed: ${cause}`;
}
