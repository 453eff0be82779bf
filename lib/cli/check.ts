/**
 * `acp-wire check "<agent command>"`: runs the battery of protocol checks against an agent and
 * prints the report.
 *
 * @packageDocumentation
 */
import { splitCommandLine } from '../chain/command-line';
import { formatCheckReport } from '../check/format';
import { STUBBED_AGENTS, stubbedAgentOf } from '../check/model-stub';
import type { CheckReport, CheckResult } from '../check/outcome';
import { AgentUnusableError } from '../check/preflight';
import { buildReport } from '../check/report';
import { SEVERITIES, type Severity } from '../check/rules';
import { type CheckOptions, checkAgent, selectChecks } from '../check/run';
import { UsageError, parseCommandArguments, parseMilliseconds } from './arguments';
import { STOP_SIGNALS, type StopSignal } from './shutdown';
import { report as reportLine, type Subcommand } from './subcommand';

const NAME = 'check';

const HELP = `usage: acp-wire check [options] [--] "<agent command>"

Starts the agent (split into words as a shell would, without a shell; started again where a check
needs a fresh one), plays the client side of a battery of checks over its stdio, byte for byte,
and prints one line per check with the severity of its rule (MUST, SHOULD, PRACTICE): pass; fail
with what broke the rule, the rule's words and a link; info (what the agent did that the rule
allows); or n/a with the reason; grouped as framing, json-rpc, initialize, sessions and lifecycle
(see docs/check.md).

options:
  --json               print the report as JSON (for CI)
  --fail-on SEVERITY   the lowest severity of a failure that fails the run: must (the default:
                       what the ACP spec or JSON-RPC 2.0 requires), should, or practice
  --trace-file PATH    write every message of the run to PATH, in the trace format
                       "acp-wire trace view PATH" shows
  --no-turns           do not run turns (session/prompt): the turn checks are n/a; for an agent
                       that has no model to talk to
  --model-stub         start a fake model server on 127.0.0.1 for an agent whose backend acp-wire
                       knows (codex-acp: the OpenAI Responses API; claude-code-acp and
                       claude-agent-acp: the Anthropic Messages API), and point the agent at it
                       in a throwaway $HOME
  --env NAME=VALUE     set a variable in the agent's environment (repeatable)
  --only NAME          run only this check or group (repeatable)
  --timeout MS         how long to wait for an answer or a turn (default 10000)
  --cancel-timeout MS  how long a cancelled turn has to end (default 3000)
  --exit-timeout MS    how long the agent has to exit once its stdin ends (default 3000)
  --deadline MS        how long the whole run may take, ending its processes included
                       (default 300000); the checks not run by then are listed
  -h, --help           show this text

exit codes: 0 when no check fails at or above --fail-on; 1 when one does; 2 for bad usage; 3 when the agent cannot be
started or initialized (no check runs); 4 when the deadline passed before every check ran; 130
(SIGINT) or 143 (SIGTERM) when stopped, after printing the results so far. Every process it
started has been ended by then.`;

const OPTIONS = {
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
} as const;

/** Parsed `check` arguments. */
interface CheckArgs {
  readonly command: string | string[];
  readonly isJson: boolean;
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

function parseCheckArgs(argv: readonly string[]): CheckArgs {
  const { values, positionals } = parseCommandArguments(argv, OPTIONS);
  if (positionals.length === 0) throw new UsageError('give the agent command, e.g. acp-wire check "node agent.js"');
  const only = values.only as string[] | undefined;
  try {
    selectChecks(only);
  } catch (error) {
    throw new UsageError(`--only: ${(error as Error).message}`);
  }
  const options: CheckOptions = {
    env: environment(values.env as string[] | undefined),
    only,
    turns: values['no-turns'] !== true,
    traceFile: values['trace-file'] as string | undefined,
    timeoutMs: milliseconds('--timeout', values.timeout),
    cancelTimeoutMs: milliseconds('--cancel-timeout', values['cancel-timeout']),
    exitTimeoutMs: milliseconds('--exit-timeout', values['exit-timeout']),
    deadlineMs: milliseconds('--deadline', values.deadline),
    failOn: severity(values['fail-on']),
  };
  // One word: a command line to split; more (after --): the program and its arguments.
  const command = positionals.length === 1 ? positionals[0]! : positionals;
  const hasModelStub = values['model-stub'] === true;
  if (hasModelStub && !stubbedAgentOf(typeof command === 'string' ? splitCommandLine(command) : command)) {
    throw new UsageError(`--model-stub knows ${Object.keys(STUBBED_AGENTS).join(', ')}; for another agent, give its model with --env`);
  }
  return { command, isJson: values.json === true, options: { ...options, modelStub: hasModelStub } };
}

/** Progress on stderr while a check runs long (a real agent): one short line per result. */
function progress(result: CheckResult): void {
  if (process.stderr.isTTY) process.stderr.write(`${result.status.padEnd(4)} ${result.id}\n`);
}

/** Exit code: the agent could not be started or initialized. */
const EXIT_AGENT_UNUSABLE = 3;
/** Exit code: the deadline passed before every check ran. */
const EXIT_INCOMPLETE = 4;

function exitCodeOf(report: CheckReport): number {
  if (!report.isComplete) return EXIT_INCOMPLETE;
  return report.isOk ? 0 : 1;
}

/** The `check` subcommand. */
export const check: Subcommand = {
  name: NAME,
  summary: "check an agent against the protocol's transport rules and print a report",
  help: HELP,
  async run(argv) {
    const args = parseCheckArgs(argv);
    const print = (report: CheckReport): void =>
      void process.stdout.write(args.isJson ? `${JSON.stringify(report, null, 2)}\n` : formatCheckReport(report));
    const controller = new AbortController();
    let stoppedBy: StopSignal | undefined;
    const stop = (signal: StopSignal): void => {
      stoppedBy ??= signal;
      controller.abort(new Error(`stopped by ${signal}`));
    };
    const onInt = (): void => stop('SIGINT');
    const onTerm = (): void => stop('SIGTERM');
    process.on('SIGINT', onInt).on('SIGTERM', onTerm);
    const results: CheckResult[] = [];
    const onResult = (result: CheckResult): void => {
      results.push(result);
      progress(result);
    };
    try {
      const report = await checkAgent(args.command, { ...args.options, onResult, signal: controller.signal });
      print(report);
      return exitCodeOf(report);
    } catch (error) {
      if (error instanceof AgentUnusableError && stoppedBy === undefined) {
        reportLine(NAME, error.message);
        return EXIT_AGENT_UNUSABLE;
      }
      if (stoppedBy === undefined) throw error;
      const notRun = selectChecks(args.options.only).filter((each) => !results.some((result) => result.id === each.id));
      print(
        buildReport(
          commandText(args.command),
          results,
          notRun.map((each) => each.id),
        ),
      );
      reportLine(NAME, `stopped by ${stoppedBy}: every agent it started has been ended`);
      return STOP_SIGNALS[stoppedBy];
    } finally {
      process.removeListener('SIGINT', onInt).removeListener('SIGTERM', onTerm);
    }
  },
};

function commandText(command: string | string[]): string {
  return typeof command === 'string' ? command : command.join(' ');
}
