/**
 * Command-line arguments of the `acp-wire` subcommands: strict `node:util` `parseArgs`, its errors
 * as one-line usage errors, and the number formats the options accept.
 *
 * @packageDocumentation
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AcpWireError } from '../jsonrpc/errors';
import { isLoopbackHost } from '../server/loopback';

/** Bad usage of the command line: printed as one line, exit code 2. */
export class UsageError extends AcpWireError {
  override readonly name = 'UsageError';
  readonly code = 'ACP_WIRE_USAGE';
}

/** The option table of one subcommand (`--help`/`-h` is added by {@link parseCommandArguments}). */
export type OptionTable = NonNullable<ParseArgsConfig['options']>;

/** What {@link parseCommandArguments} returns: option values by name, and the positionals in order. */
export interface ParsedArguments {
  /** A string, a flag's `true`, or the strings of an option declared `multiple`. */
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * Parses `argv` strictly against `options`, with positionals allowed (and `--` ending the options).
 *
 * @throws UsageError naming the option for an unknown option, a missing value, a value given to a
 * flag, or a value that starts with `-` given as a separate word
 */
export function parseCommandArguments(argv: readonly string[], options: OptionTable): ParsedArguments {
  try {
    const args = joinNegativeValues(argv, options);
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { values: values as ParsedArguments['values'], positionals };
  } catch (error) {
    throw toUsageError(error);
  }
}

/**
 * `--tcp -1` as `--tcp=-1`, so that a negative number given to an option that takes a value is
 * refused by the option's own check (naming the value), not as an ambiguous option.
 */
function joinNegativeValues(argv: readonly string[], options: OptionTable): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return [...args, ...argv.slice(i)];
    const takesValue = arg.startsWith('--') && options[arg.slice(2)]?.type === 'string';
    if (takesValue && i + 1 < argv.length && /^-[0-9.]/.test(argv[i + 1]!)) args.push(`${arg}=${argv[++i]!}`);
    else args.push(arg);
  }
  return args;
}

/** Whether `argv` asks for help (`--help` or `-h` before any `--`), whatever else it holds. */
export function wantsHelp(argv: readonly string[]): boolean {
  const { tokens } = parseArgs({
    args: [...argv],
    options: { help: { type: 'boolean', short: 'h' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.some((token) => token.kind === 'option' && token.name === 'help');
}

/** `parseArgs`' multi-sentence errors, as one line that names the option. */
function toUsageError(error: unknown): unknown {
  if (!(error instanceof Error) || !('code' in error)) return error;
  const option = /'(-[^' ]+)/.exec(error.message)?.[1] ?? 'an option';
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`unknown option ${option}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(error.message)) return new UsageError(`${option} takes no value`);
      if (/ambiguous/.test(error.message))
        return new UsageError(`${option} needs a value; write ${option}=VALUE for a value that starts with -`);
      return new UsageError(`${option} needs a value`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(error.message.split('\n')[0]!);
    default:
      return error;
  }
}

/**
 * A decimal integer from `min` to `max`: digits only, so `0x10`, `1e3`, `' 0'`, `-1`, `+1` and `1.5`
 * are refused (where `Number()` would take most of them).
 *
 * @param option - the option's name, for the message (e.g. `--tcp`)
 * @param what - what the number is, for the message (e.g. `a port`)
 * @throws UsageError naming the option and the value
 */
export function parseDecimal(option: string, text: string, what: string, min: number, max: number): number {
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`${option} needs ${what} from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** The largest delay `setTimeout` keeps (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A TCP port: a decimal integer from 0 (any free port) to 65535. @throws UsageError */
export function parsePort(option: string, text: string): number {
  return parseDecimal(option, text, 'a port', 0, 65535);
}

/** A duration in milliseconds: a decimal integer from 0 to {@link MAX_TIMER_MS}. @throws UsageError */
export function parseMilliseconds(option: string, text: string): number {
  return parseDecimal(option, text, 'a number of milliseconds', 0, MAX_TIMER_MS);
}

/**
 * Refuses to serve on an address other machines can reach without a bearer token, unless the
 * user said `--insecure-no-token`: the clients of such a server run an agent on this host.
 *
 * @param option - the option that named the address, for the message (e.g. `--host`)
 * @throws UsageError naming the option and the address
 */
export function checkExposure(option: string, host: string, token: string | undefined, isInsecureNoToken: boolean): void {
  if (isLoopbackHost(host) || token !== undefined || isInsecureNoToken) return;
  throw new UsageError(
    `${option} ${host} is reachable from other machines: set ACP_WIRE_TOKEN, or pass --insecure-no-token to serve anyone who reaches it`,
  );
}

/**
 * The bearer token in `ACP_WIRE_TOKEN` (`undefined` when unset or empty).
 *
 * @throws UsageError when it holds whitespace (it could not be sent in an `Authorization` header)
 */
export function bearerTokenFromEnvironment(): string | undefined {
  const token = process.env.ACP_WIRE_TOKEN || undefined;
  if (token !== undefined && /\s/.test(token)) throw new UsageError('ACP_WIRE_TOKEN must not hold whitespace');
  return token;
}
