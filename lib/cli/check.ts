/**
 * `acp-wire check "<agent command>"`: runs the battery of protocol checks against an agent and
 * prints the report.
 *
 * @packageDocumentation
 */
import { writeFileSync } from 'node:fs';
import { formatBaseline } from '../check/baseline';
import { formatCheckReport } from '../check/format';
import { toJsonReport, toJsonUnusable } from '../check/json-report';
import { toJunitUnusable, toJunitXml } from '../check/junit';
import type { Check } from '../check/check';
import type { CheckReport, CheckResult } from '../check/outcome';
import { AgentUnusableError } from '../check/preflight';
import { buildReport } from '../check/report';
import { CHECKS, PROXY_CHECKS, REMOTE_CHECKS } from '../check/battery';
import { checkRemote } from '../check/remote-run';
import { type CheckOptions, checkAgent, checkProxy, selectChecks } from '../check/run';
import { type CheckArgs, parseCheckArgs } from './check-arguments';
import { STOP_SIGNALS, type StopSignal } from './shutdown';
import { report as reportLine, type Subcommand } from './subcommand';

const NAME = 'check';

const HELP = `usage: acp-wire check [options] [--] "<agent command>"
       acp-wire check --proxy [options] [--] "<proxy command>"
       acp-wire check --url ws://…|http://… [options]

Starts the agent (split into words as a shell would, without a shell; started again where a check
needs a fresh one), plays the client side of a battery of checks over its stdio, byte for byte,
and prints one line per check with the severity of its rule (MUST, SHOULD, PRACTICE): pass; fail
with what broke the rule, the rule's words and a link; info (what the agent did that the rule
allows); or n/a with the reason; grouped as framing, json-rpc, initialize, sessions and lifecycle
(see docs/check.md).

options:
  --proxy              the command starts a proxy: the check plays its conductor, its successor
                       and its client (proxy/initialize, the proxy/successor envelope both ways,
                       ids per hop, $/cancel_request re-issued, mcp/message, a clean exit)
  --url URL            check the remote ACP server at URL (ws://, wss://: WebSocket; http://,
                       https://: Streamable HTTP, the RFD's dialect and acp-http-client's):
                       connection ids, one answer per request, 401/403, 503 with Retry-After,
                       resumption where advertised; no command
  --token TOKEN        with --url: the server's token (default: $ACP_WIRE_TOKEN); without one,
                       remote.auth is n/a
  --max-clients N      with --url: the server's client limit; without it, remote.capacity is n/a
  --json               print the report as JSON (for CI: schemaVersion, the tool's version, each
                       result's rule and evidence, the lines exactly as they crossed)
  --junit FILE         also write the report as JUnit XML to FILE
  --fail-on SEVERITY   the lowest severity of a failure that fails the run: must (the default:
                       what the ACP spec or JSON-RPC 2.0 requires), should, or practice
  --baseline FILE      the failures expected today, one check id per line (# comments): they
                       do not fail the run; a new failure does, and so does an entry whose check
                       now passes (stale)
  --write-baseline FILE  write the run's failures (at or above --fail-on) as a baseline
  --trace-file PATH    write every line of the run to PATH exactly as it crossed (stdin, stdout,
                       stderr, process events), each tagged with the check and the process
  --no-turns           do not run turns (session/prompt): the turn checks are n/a; for an agent
                       that has no model to talk to
  --model-stub         start a fake model server on 127.0.0.1 for an agent whose backend acp-wire
                       knows (codex-acp: OpenAI Responses; claude-code-acp, claude-agent-acp:
                       Anthropic Messages; gemini-cli: the Gemini API; opencode: OpenAI Chat
                       Completions), and point the agent at it in a throwaway $HOME
  --env NAME=VALUE     set a variable in the agent's environment (repeatable)
  --only NAME          run only this check or group (repeatable)
  --timeout MS         how long to wait for an answer or a turn (default 10000)
  --cancel-timeout MS  how long a cancelled turn has to end (default 3000)
  --exit-timeout MS    how long the agent has to exit once its stdin ends (default 3000)
  --deadline MS        how long the whole run may take, ending its processes included
                       (default 300000); the checks not run by then are listed
  -h, --help           show this text

exit codes: 0 when no check fails at or above --fail-on (but those --baseline expects) and no
baseline entry is stale; 1 otherwise; 2 for bad usage; 3 when the agent cannot be
started or initialized (no check runs); 4 when the deadline passed before every check ran; 130
(SIGINT) or 143 (SIGTERM) when stopped, after printing the results so far. Every process it
started has been ended by then.`;

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
    const print = (report: CheckReport): void => writeOutputs(args, report);
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
      const report = await runCheck(args, { ...args.options, onResult, signal: controller.signal });
      print(report);
      return exitCodeOf(report);
    } catch (error) {
      if (error instanceof AgentUnusableError && stoppedBy === undefined) {
        writeUnusable(args, error);
        return EXIT_AGENT_UNUSABLE;
      }
      if (stoppedBy === undefined) throw error;
      const battery = args.role === 'remote' ? REMOTE_CHECKS : args.role === 'proxy' ? PROXY_CHECKS : CHECKS;
      const notRun = selectChecks<unknown>(args.options.only, battery as readonly Check<unknown>[]).filter(
        (each) => !results.some((result) => result.id === each.id),
      );
      print(
        buildReport(
          commandText(args.command),
          results,
          notRun.map((each) => each.id),
          args.options,
        ),
      );
      reportLine(NAME, `stopped by ${stoppedBy}: every agent it started has been ended`);
      return STOP_SIGNALS[stoppedBy];
    } finally {
      process.removeListener('SIGINT', onInt).removeListener('SIGTERM', onTerm);
    }
  },
};

/** Runs the battery `args` name: of an agent, a proxy, or a remote server. */
function runCheck(args: CheckArgs, options: CheckOptions): Promise<CheckReport> {
  if (args.role === 'remote') return checkRemote(String(args.command), { ...options, ...args.remote });
  return args.role === 'proxy' ? checkProxy(args.command, options) : checkAgent(args.command, options);
}

/** The report on stdout (text or JSON), and in the files asked for (JUnit, a baseline). */
function writeOutputs(args: CheckArgs, report: CheckReport): void {
  process.stdout.write(args.isJson ? `${JSON.stringify(toJsonReport(report), null, 2)}\n` : formatCheckReport(report));
  if (args.junitFile !== undefined) writeFileSync(args.junitFile, toJunitXml(report));
  if (args.writeBaseline !== undefined) writeFileSync(args.writeBaseline, formatBaseline(report));
}

/** A run that could not start its agent: one line on stderr, and the JSON and JUnit documents asked for. */
function writeUnusable(args: CheckArgs, error: AgentUnusableError): void {
  reportLine(NAME, error.message);
  const command = commandText(args.command);
  if (args.isJson) process.stdout.write(`${JSON.stringify(toJsonUnusable(command, error), null, 2)}\n`);
  if (args.junitFile !== undefined) writeFileSync(args.junitFile, toJunitUnusable(command, error));
}

function commandText(command: string | string[]): string {
  return typeof command === 'string' ? command : command.join(' ');
}
