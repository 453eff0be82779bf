/**
 * `checkAgent()`: runs the battery of checks against an agent command and returns the report.
 *
 * @packageDocumentation
 */
import { resolve } from 'node:path';
import { splitCommandLine } from '../chain/command-line';
import { TraceFileWriter } from '../trace/file';
import { type ModelStub, STUBBED_AGENTS, startModelStub, stubbedAgentOf } from './model-stub';
import { CHECKS } from './battery';
import { type CheckSettings, CheckContext } from './context';
import {
  type Check,
  CHECK_GROUPS,
  CheckFailure,
  type CheckOutcome,
  type CheckReport,
  type CheckResult,
  type CheckStatus,
  fail,
} from './outcome';
import { traceTap } from './wire-tap';

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
  /** Whether to run turns (`session/prompt`); false makes the turn checks `n/a`. Default true. */
  turns?: boolean;
  /** Run only these checks: ids (`json-rpc.id-echo`) or groups (`framing`). Default: all. */
  only?: readonly string[];
  /** Writes every message of the run to this trace file (docs/tracing.md; `acp-wire trace view FILE`). */
  traceFile?: string;
  /**
   * Starts a fake model server on 127.0.0.1 for an agent whose backend acp-wire knows (a word of the
   * command names `codex-acp`, `claude-code-acp` or `claude-agent-acp`), and runs the agent in a
   * throwaway `$HOME` pointed at it (`sessionCwd` defaults to that home). Default false.
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

function settingsOf(argv: readonly string[], options: CheckOptions): CheckSettings {
  return {
    argv,
    cwd: options.cwd ?? process.cwd(),
    sessionCwd: resolve(options.sessionCwd ?? options.cwd ?? process.cwd()),
    env: options.env,
    timeoutMs: positive('timeoutMs', options.timeoutMs, 10_000),
    cancelTimeoutMs: positive('cancelTimeoutMs', options.cancelTimeoutMs, 3000),
    exitTimeoutMs: positive('exitTimeoutMs', options.exitTimeoutMs, 3000),
    quietMs: positive('quietMs', options.quietMs, 300),
    canRunTurns: options.turns ?? true,
  };
}

/** The checks `only` selects (all without it). @throws RangeError naming an unknown id or group */
export function selectChecks(only: readonly string[] | undefined): Check[] {
  if (only === undefined || only.length === 0) return [...CHECKS];
  for (const name of only) {
    if (!CHECKS.some((check) => check.id === name || check.group === name))
      throw new RangeError(`no check or group named ${JSON.stringify(name)}`);
  }
  return CHECKS.filter((check) => only.includes(check.id) || only.includes(check.group));
}

/** The longest a check may take: its waits are bounded, this bounds their sum. */
function budgetOf(settings: CheckSettings): number {
  return 3 * settings.timeoutMs + 3 * settings.cancelTimeoutMs + 3 * settings.exitTimeoutMs + 2 * settings.quietMs;
}

/** A promise that rejects with the reason of `signal` once it aborts (never, without one), and how to stop listening. */
function abortion(signal: AbortSignal | undefined): { promise: Promise<never>; release: () => void } {
  if (!signal) return { promise: new Promise<never>(() => {}), release: () => {} };
  let onAbort = (): void => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, release: () => signal.removeEventListener('abort', onAbort) };
}

async function runOne(check: Check, context: CheckContext, signal: AbortSignal | undefined): Promise<CheckResult> {
  signal?.throwIfAborted();
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const budget = budgetOf(context.settings);
  const overtime = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => resolve(fail(`the check did not finish within ${budget} ms`)), budget);
  });
  const aborted = abortion(signal);
  const running = check.run(context);
  // A check abandoned (overtime, abort) may still reject later, once its agents are gone.
  running.catch(() => {});
  let outcome: CheckOutcome;
  try {
    outcome = await Promise.race([running, overtime, aborted.promise]);
  } catch (error) {
    if (signal?.aborted) throw error;
    outcome = error instanceof CheckFailure ? error.outcome : fail(`the check itself failed: ${String((error as Error)?.stack ?? error)}`);
  } finally {
    clearTimeout(timer);
    aborted.release();
    await context.closeOwn();
  }
  return { id: check.id, group: check.group, title: check.title, ...outcome, durationMs: Math.round(performance.now() - start) };
}

function reportOf(command: string, results: CheckResult[]): CheckReport {
  const order = (result: CheckResult): number =>
    CHECK_GROUPS.indexOf(result.group) * 1000 + CHECKS.findIndex((check) => check.id === result.id);
  const sorted = [...results].sort((a, b) => order(a) - order(b));
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, 'n/a': 0 };
  for (const result of sorted) counts[result.status]++;
  return { command, results: sorted, counts, isOk: counts.fail === 0 };
}

/**
 * Starts the agent `command` (as many times as the checks need), plays the client side of the
 * battery of checks against it, and resolves with the report: one result per check, `pass`,
 * `fail` with what broke the rule, or `n/a` with the reason.
 *
 * @remarks
 * Checks talk to the agent's stdio line by line, byte for byte (no `Connection` in between, which
 * would hide what they look for), each bounded in time. Every process started is ended, its whole
 * process group, before this resolves. A failing check does not reject: it is a `fail` line.
 * The battery and what each check proves are listed in docs/check.md.
 * @param command - a command line (split as a POSIX shell would, without running one) or its words
 * @throws CommandLineError for a command line that cannot be split
 * @throws RangeError for an invalid option or an unknown name in `only`; rejects with the reason of
 * `signal` once it aborts (after ending what it started)
 * @example
 * ```ts
 * const report = await checkAgent('node dist/examples/conformance-agent.js');
 * for (const result of report.results) console.log(result.status, result.id, result.message ?? '');
 * ```
 */
export async function checkAgent(command: string | readonly string[], options: CheckOptions = {}): Promise<CheckReport> {
  const argv = typeof command === 'string' ? splitCommandLine(command) : [...command];
  if (argv.length === 0) throw new RangeError('command must name a program');
  settingsOf(argv, options);
  const checks = selectChecks(options.only);
  const stubbed = stubbedAgentOf(argv);
  if (options.modelStub && !stubbed) {
    throw new RangeError(
      `modelStub: acp-wire has a fake model for ${Object.keys(STUBBED_AGENTS).join(', ')} only; give the agent's model in env`,
    );
  }
  const stub = options.modelStub && stubbed ? await startModelStub(stubbed, options.env) : undefined;
  try {
    const settings = { ...settingsOf(argv, withStub(options, stub)), finishHeldTurns: stub && (() => stub.server.finishHeldTurns()) };
    const results = await runChecks(checks, settings, options);
    return reportOf(typeof command === 'string' ? command : argv.join(' '), results);
  } finally {
    await stub?.close();
  }
}

function withStub(options: CheckOptions, stub: ModelStub | undefined): CheckOptions {
  return stub ? { ...options, env: stub.env, sessionCwd: options.sessionCwd ?? stub.home } : options;
}

async function runChecks(checks: readonly Check[], settings: CheckSettings, options: CheckOptions): Promise<CheckResult[]> {
  const trace = options.traceFile === undefined ? undefined : TraceFileWriter.open(options.traceFile);
  const began = performance.now();
  const context = new CheckContext(settings, () => performance.now() - began, trace && traceTap((event) => trace.write(event)));
  const results: CheckResult[] = [];
  const record = (result: CheckResult): void => {
    results.push(result);
    options.onResult?.(result);
  };
  const hurry = (): void => context.hurry();
  options.signal?.addEventListener('abort', hurry, { once: true });
  try {
    for (const check of checks.filter((each) => !each.isFinal)) {
      await context.enterGroup(check.group);
      record(await runOne(check, context, options.signal));
    }
    await context.closeShared();
    for (const check of checks.filter((each) => each.isFinal)) record(await runOne(check, context, options.signal));
  } finally {
    await context.closeShared();
    options.signal?.removeEventListener('abort', hurry);
    trace?.close();
  }
  return results;
}
