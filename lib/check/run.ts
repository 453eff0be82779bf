/**
 * `checkAgent()`: runs the battery of checks against an agent command and returns the report.
 *
 * @packageDocumentation
 */
import { resolve } from 'node:path';
import { splitCommandLine } from '../chain/command-line';
import { packageVersion } from '../support/package-version';
import { type ModelStub, STUBBED_AGENTS, startModelStub, stubbedAgentOf } from './model-stub';
import { CHECKS, PROXY_CHECKS } from './battery';
import { type CheckSettings, CheckContext } from './context';
import type { Check } from './check';
import type { CheckReport, CheckResult } from './outcome';
import { buildReport } from './report';
import { SEVERITIES, type Severity } from './rules';
import { preflight } from './preflight';
import { type RunContext, runChecks } from './runner';
import type { WireLine } from './wire-line';
import { EvidenceTrace } from './evidence-trace';

/** The default of {@link CheckOptions.deadlineMs}. */
export const DEFAULT_DEADLINE_MS = 300_000;

/** Options of {@link checkAgent}. */
export interface CheckOptions {
  /** The agent's working directory. Default: `process.cwd()`. */
  cwd?: string;
  /** The `cwd` of the sessions the checks open. Default: `cwd` (with `modelStub`, the throwaway home). */
  sessionCwd?: string;
  /** The agent's environment. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for an answer or for a turn to end. Default 10000 ms. */
  timeoutMs?: number;
  /** How long a cancelled turn has to end. Default 3000 ms. */
  cancelTimeoutMs?: number;
  /** How long the agent has to exit once its stdin ends (and its process group after it). Default 3000 ms. */
  exitTimeoutMs?: number;
  /** How long silence must last to show that no answer comes (to a notification). Default 300 ms. */
  quietMs?: number;
  /**
   * How long the whole run may take, the ending of its processes included. When it passes, the
   * check under way is abandoned and the report is incomplete (`isComplete` false, `notRun`).
   * Default 300000 ms (five minutes).
   */
  deadlineMs?: number;
  /**
   * The lowest severity of a failure that fails the run (`CheckReport.isOk` false, exit 1): `must`
   * (the default: only what the ACP spec or JSON-RPC 2.0 requires), `should`, or `practice` (every failure).
   */
  failOn?: Severity;
  /**
   * The failures expected (check ids, e.g. from a baseline file: `parseBaseline()`): they do not
   * fail the run, and an id whose check passes fails it (stale). Default none.
   */
  baseline?: readonly string[];
  /** Whether to run turns (`session/prompt`); false makes the turn checks `n/a`. Default true. */
  turns?: boolean;
  /** Run only these checks: ids (`json-rpc.id-echo`) or groups (`framing`). Default: all. */
  only?: readonly string[];
  /**
   * Writes every line of the run to this file as it crossed, each tagged with the check under way
   * and the process (an evidence trace, readable in a terminal: docs/check.md).
   */
  traceFile?: string;
  /**
   * Starts a fake model server on 127.0.0.1 for an agent whose backend acp-wire knows (a word of the
   * command names `codex-acp`, `claude-code-acp`, `claude-agent-acp`, gemini-cli or opencode: see
   * `STUBBED_AGENTS`), and runs the agent in a throwaway `$HOME` pointed at it (`sessionCwd`
   * defaults to that home). Default false.
   */
  modelStub?: boolean;
  /**
   * Stops the run: the check under way is abandoned, every agent started is ended (and the model
   * stub stopped), then `checkAgent()` rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** Called with each result as soon as its check has run (in run order; the report is grouped). */
  onResult?: (result: CheckResult) => void;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!(typeof resolved === 'number' && Number.isFinite(resolved) && resolved > 0))
    throw new RangeError(`${name} must be a positive number of milliseconds`);
  return resolved;
}

function settingsOf(argv: readonly string[], options: CheckOptions, role: CheckSettings['role'] = 'agent'): CheckSettings {
  return {
    argv,
    role,
    cwd: options.cwd ?? process.cwd(),
    sessionCwd: resolve(options.sessionCwd ?? options.cwd ?? process.cwd()),
    env: options.env,
    timeoutMs: positive('timeoutMs', options.timeoutMs, 10_000),
    cancelTimeoutMs: positive('cancelTimeoutMs', options.cancelTimeoutMs, 3000),
    exitTimeoutMs: positive('exitTimeoutMs', options.exitTimeoutMs, 3000),
    quietMs: positive('quietMs', options.quietMs, 300),
    canRunTurns: options.turns ?? true,
    deadlineMs: positive('deadlineMs', options.deadlineMs, DEFAULT_DEADLINE_MS),
  };
}

/** The checks of `battery` (the agent's by default) `only` selects (all without it). @throws RangeError naming an unknown id or group */
export function selectChecks<C>(
  only: readonly string[] | undefined,
  battery: readonly Check<C>[] = CHECKS as readonly Check<C>[],
): Check<C>[] {
  if (only === undefined || only.length === 0) return [...battery];
  for (const name of only) {
    if (!battery.some((check) => check.id === name || check.group === name))
      throw new RangeError(`no check or group named ${JSON.stringify(name)}`);
  }
  return battery.filter((check) => only.includes(check.id) || only.includes(check.group));
}

/**
 * Starts the agent `command` (as many times as the checks need), plays the client side of the
 * battery of checks against it, and resolves with the report: one result per check, `pass`,
 * `fail` with what broke the rule, or `n/a` with the reason.
 *
 * @remarks
 * Checks talk to the agent's stdio line by line, byte for byte (no `Connection` in between, which
 * would hide what they look for), each bounded in time. Every process started is ended, its whole
 * process group, before this settles. A failing check does not reject: it is a `fail` line.
 * The agent is started and initialized once before any check: when that fails, no check runs.
 * The whole run is bounded by `deadlineMs`. The battery and what each check proves are listed in
 * docs/check.md.
 * @param command - a command line (split as a POSIX shell would, without running one) or its words
 * @throws CommandLineError for a command line that cannot be split
 * @throws RangeError for an invalid option or an unknown name in `only`; rejects with the reason of
 * `signal` once it aborts (after ending what it started)
 * @throws AgentUnusableError when the agent cannot be started or initialized (it does not start,
 * exits, does not answer `initialize` within `timeoutMs`, or answers it with an error)
 * @example
 * ```ts
 * const report = await checkAgent('node dist/examples/conformance-agent.js');
 * for (const result of report.results) console.log(result.status, result.id, result.message ?? '');
 * ```
 */
export function checkAgent(command: string | readonly string[], options: CheckOptions = {}): Promise<CheckReport> {
  return checkProcess('agent', command, options);
}

/**
 * Starts the proxy `command` (as many times as the checks need), plays its conductor, its
 * successor and its client, and resolves with the report of the proxy battery (docs/check.md).
 *
 * @remarks As {@link checkAgent}, with `proxy/initialize` for `initialize`; `turns` and
 * `modelStub` do not apply.
 * @throws CommandLineError for a command line that cannot be split
 * @throws RangeError for an invalid option, `modelStub`, or an unknown name in `only`; rejects
 * with the reason of `signal` once it aborts (after ending what it started)
 * @throws AgentUnusableError when the proxy cannot be started or initialized
 */
export function checkProxy(command: string | readonly string[], options: CheckOptions = {}): Promise<CheckReport> {
  if (options.modelStub) return Promise.reject(new RangeError('modelStub does not apply to a proxy: the check plays its successor'));
  return checkProcess('proxy', command, options);
}

async function checkProcess(role: CheckSettings['role'], command: string | readonly string[], options: CheckOptions): Promise<CheckReport> {
  const argv = typeof command === 'string' ? splitCommandLine(command) : [...command];
  if (argv.length === 0) throw new RangeError('command must name a program');
  settingsOf(argv, options);
  if (options.failOn !== undefined && !SEVERITIES.includes(options.failOn))
    throw new RangeError(`failOn must be one of ${SEVERITIES.join(', ')}`);
  const battery = role === 'proxy' ? PROXY_CHECKS : CHECKS;
  const unknown = options.baseline?.find((id) => !battery.some((check) => check.id === id));
  if (unknown !== undefined) throw new RangeError(`baseline: no check named ${JSON.stringify(unknown)}`);
  const checks = selectChecks(options.only, battery);
  const stubbed = stubbedAgentOf(argv);
  if (options.modelStub && !stubbed) {
    throw new RangeError(
      `modelStub: acp-wire has a fake model for ${Object.keys(STUBBED_AGENTS).join(', ')} only; give the agent's model in env`,
    );
  }
  const stub = options.modelStub && stubbed ? await startModelStub(stubbed, options.env) : undefined;
  try {
    const settings: CheckSettings = {
      ...settingsOf(argv, withStub(options, stub), role),
      finishHeldTurns: stub && (() => stub.server.finishHeldTurns()),
    };
    return await run(settings, typeof command === 'string' ? command : argv.join(' '), checks, options);
  } finally {
    await stub?.close();
  }
}

function withStub(options: CheckOptions, stub: ModelStub | undefined): CheckOptions {
  return stub ? { ...options, env: stub.env, sessionCwd: options.sessionCwd ?? stub.home } : options;
}

async function run(settings: CheckSettings, command: string, checks: readonly Check[], options: CheckOptions): Promise<CheckReport> {
  return runTraced(command, options, (clock, onLine) => new CheckContext(settings, clock, onLine), checks, preflight);
}

/**
 * Runs `checks` on the context `contextOf` makes (with the run's clock, and the evidence trace when
 * `options.traceFile` asks for one) after `first`, and builds the report.
 *
 * @internal
 */
export async function runTraced<C extends RunContext>(
  command: string,
  options: Pick<CheckOptions, 'traceFile' | 'signal' | 'onResult' | 'failOn' | 'baseline'>,
  contextOf: (clock: () => number, onLine: ((line: WireLine) => void) | undefined) => C,
  checks: readonly Check<C>[],
  first: (context: C) => Promise<void>,
): Promise<CheckReport> {
  const trace = options.traceFile === undefined ? undefined : EvidenceTrace.open(options.traceFile, command, packageVersion());
  const began = performance.now();
  const context = contextOf(() => performance.now() - began, trace && ((line) => trace.write(line)));
  try {
    const { results, notRun } = await runChecks(checks, context, first, options.signal, (result) => options.onResult?.(result));
    return buildReport(command, results, notRun, options);
  } finally {
    trace?.close();
  }
}
