/**
 * The arguments of `acp-wire check`: its options, checked before anything starts (a bad value is
 * a one-line usage error, exit 2), as `CheckOptions` and the outputs to write.
 *
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { splitCommandLine } from '../chain/command-line';
import { parseBaseline } from '../check/baseline';
import { CHECKS, PROXY_CHECKS, REMOTE_CHECKS } from '../check/battery';
import { STUBBED_AGENTS, stubbedAgentOf } from '../check/model-stub';
import { SEVERITIES, type Severity } from '../check/rules';
import { type CheckOptions, selectChecks } from '../check/run';
import { type ParsedArguments, UsageError, parseCommandArguments, parseMilliseconds } from './arguments';

/** The options of `acp-wire check` (`node:util` `parseArgs`). */
export const CHECK_OPTIONS = {
  json: { type: 'boolean' },
  'trace-file': { type: 'string' },
  'no-turns': { type: 'boolean' },
  'model-stub': { type: 'boolean' },
  env: { type: 'string', multiple: true },
  only: { type: 'string', multiple: true },
  timeout: { type: 'string' },
  'cancel-timeout': { type: 'string' },
  'exit-timeout': { type: 'string' },
  deadline: { type: 'string' },
  'fail-on': { type: 'string' },
  baseline: { type: 'string' },
  'write-baseline': { type: 'string' },
  junit: { type: 'string' },
  proxy: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
  'max-clients': { type: 'string' },
} as const;

/** Parsed `check` arguments. */
export interface CheckArgs {
  /** What is checked: the agent or proxy (`--proxy`) the command starts, or the server at `--url` (`remote`). */
  readonly role: 'agent' | 'proxy' | 'remote';
  /** The command (for `remote`, the URL). */
  readonly command: string | string[];
  /** With `--url`: the server's token (`--token`, else `ACP_WIRE_TOKEN`) and client limit (`--max-clients`). */
  readonly remote?: { readonly token?: string; readonly maxClients?: number };
  readonly isJson: boolean;
  /** Where to write the report as JUnit XML. */
  readonly junitFile?: string;
  /** Where to write the failures of the run as a baseline. */
  readonly writeBaseline?: string;
  readonly options: CheckOptions;
}

function milliseconds(option: string, value: string | boolean | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = parseMilliseconds(option, value);
  if (ms === 0) throw new UsageError(`${option} needs a positive number of milliseconds, got "0"`);
  return ms;
}

function severity(value: string | boolean | string[] | undefined): Severity | undefined {
  if (typeof value !== 'string') return undefined;
  if (!(SEVERITIES as readonly string[]).includes(value))
    throw new UsageError(`--fail-on needs one of ${SEVERITIES.join(', ')}, got ${JSON.stringify(value)}`);
  return value as Severity;
}

function environment(pairs: string[] | undefined): NodeJS.ProcessEnv | undefined {
  if (pairs === undefined) return undefined;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals < 1) throw new UsageError(`--env needs NAME=VALUE, got ${JSON.stringify(pair)}`);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return env;
}

/** The check ids the baseline file at `path` lists, each one of `battery`'s. @throws UsageError when it cannot be read or names no check */
function baselineOf(path: string | boolean | string[] | undefined, battery: readonly { id: string }[]): string[] | undefined {
  if (typeof path !== 'string') return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--baseline: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return parseBaseline(
      text,
      battery.map((check) => check.id),
    );
  } catch (error) {
    throw new UsageError(`--baseline ${path}: ${(error as Error).message}`);
  }
}

/**
 * Parses the arguments of `acp-wire check`.
 *
 * @throws UsageError for anything the command cannot run with (nothing is started)
 */
export function parseCheckArgs(argv: readonly string[]): CheckArgs {
  const { values, positionals } = parseCommandArguments(argv, CHECK_OPTIONS);
  const url = values.url as string | undefined;
  if (url !== undefined) return parseRemoteArgs(url, values, positionals);
  if (positionals.length === 0) throw new UsageError('give the agent command, e.g. acp-wire check "node agent.js"');
  const role = values.proxy === true ? 'proxy' : 'agent';
  const battery = role === 'proxy' ? PROXY_CHECKS : CHECKS;
  if (role === 'proxy' && values['model-stub'] === true)
    throw new UsageError('--model-stub does not apply to --proxy: the check plays its successor');
  const options: CheckOptions = {
    ...commonOptions(values, battery),
    env: environment(values.env as string[] | undefined),
    turns: values['no-turns'] !== true,
    cancelTimeoutMs: milliseconds('--cancel-timeout', values['cancel-timeout']),
    exitTimeoutMs: milliseconds('--exit-timeout', values['exit-timeout']),
  };
  // One word: a command line to split; more (after --): the program and its arguments.
  const command = positionals.length === 1 ? positionals[0]! : positionals;
  const hasModelStub = values['model-stub'] === true;
  if (hasModelStub && !stubbedAgentOf(typeof command === 'string' ? splitCommandLine(command) : command)) {
    throw new UsageError(`--model-stub knows ${Object.keys(STUBBED_AGENTS).join(', ')}; for another agent, give its model with --env`);
  }
  return {
    role,
    command,
    isJson: values.json === true,
    junitFile: values.junit as string | undefined,
    writeBaseline: values['write-baseline'] as string | undefined,
    options: { ...options, modelStub: hasModelStub },
  };
}

/** The options common to every role: bounds, selection, judgement. */
function commonOptions(values: ParsedArguments['values'], battery: readonly { id: string; group: string }[]): CheckOptions {
  const only = values.only as string[] | undefined;
  try {
    selectChecks(only, battery as typeof CHECKS);
  } catch (error) {
    throw new UsageError(`--only: ${(error as Error).message}`);
  }
  return {
    only,
    traceFile: values['trace-file'] as string | undefined,
    timeoutMs: milliseconds('--timeout', values.timeout),
    deadlineMs: milliseconds('--deadline', values.deadline),
    failOn: severity(values['fail-on']),
    baseline: baselineOf(values.baseline, battery),
  };
}

/** `--url URL`: the server's checks; no command, no option of a process. */
function parseRemoteArgs(url: string, values: ParsedArguments['values'], positionals: string[]): CheckArgs {
  if (positionals.length > 0) throw new UsageError('--url checks a server: give no command with it');
  for (const option of ['proxy', 'model-stub', 'no-turns', 'env', 'cancel-timeout', 'exit-timeout']) {
    if (values[option] !== undefined) throw new UsageError(`--${option} does not apply to --url`);
  }
  if (!/^(wss?|https?):\/\//.test(url))
    throw new UsageError(`--url needs a ws://, wss://, http:// or https:// URL, got ${JSON.stringify(url)}`);
  const maxClients = values['max-clients'] === undefined ? undefined : parseClients(String(values['max-clients']));
  const token = (values.token as string | undefined) ?? process.env.ACP_WIRE_TOKEN;
  return {
    role: 'remote',
    command: url,
    isJson: values.json === true,
    junitFile: values.junit as string | undefined,
    writeBaseline: values['write-baseline'] as string | undefined,
    options: commonOptions(values, REMOTE_CHECKS),
    remote: { token, maxClients },
  };
}

function parseClients(text: string): number {
  const n = Number(text);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(n))
    throw new UsageError(`--max-clients needs a whole number above 0, got ${JSON.stringify(text)}`);
  return n;
}
