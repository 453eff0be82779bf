/**
 * Runs the selected checks one after another against a context ({@link CheckContext} or another
 * {@link RunContext}): each bounded by its
 * budget, the whole run by its deadline; stopped at once by an abort; every process the run
 * started ended before it returns.
 *
 * @packageDocumentation
 */
import type { CheckContext } from './context';
import type { Check } from './check';
import { CheckFailure, type CheckGroup, type CheckOutcome, type CheckResult, fail } from './outcome';
import type { WireLine } from './wire-line';

/** The bounds of a run that the runner reads. */
export interface RunBounds {
  readonly timeoutMs: number;
  readonly cancelTimeoutMs: number;
  readonly exitTimeoutMs: number;
  readonly quietMs: number;
  readonly deadlineMs: number;
}

/**
 * What the runner needs of a context (a {@link CheckContext} for processes, a `RemoteContext` for
 * a server): its bounds, what each participant saw, and the steps around each check.
 */
export interface RunContext {
  readonly settings: RunBounds;
  /** Every participant of the run (a process, a connection), each with every line it saw. */
  readonly participants: readonly { readonly transcript: readonly WireLine[] }[];
  beginCheck(id: string): void;
  enterGroup(group: CheckGroup): Promise<void>;
  /** The run is stopped: what is ended from now on is ended at once. */
  hurry(): void;
  closeOwn(): Promise<void>;
  closeShared(): Promise<void>;
  closeAll(): Promise<void>;
}

/** How many of a check's own lines stand as the evidence of an outcome that names none (the last ones). */
const EVIDENCE_LINES = 40;

/** The last lines the check `id` saw, in and out of every process, with their stderr and events, in time order. */
function linesOf(context: RunContext, id: string): WireLine[] {
  const lines = context.participants.flatMap((each) => each.transcript.filter((line) => line.check === id));
  return lines.sort((a, b) => a.at - b.at).slice(-EVIDENCE_LINES);
}

/** What a run gives back: the results of the checks that ran, and those that did not (the deadline passed). */
export interface RunResults {
  readonly results: CheckResult[];
  readonly notRun: string[];
}

/** How long the ending of the run's processes may take, kept from the deadline for it. */
export function closeReserveMs(deadlineMs: number): number {
  return Math.min(2000, Math.floor(deadlineMs / 4));
}

/** The longest a check may take: its waits are bounded, this bounds their sum. */
function budgetOf(settings: RunBounds): number {
  return 3 * settings.timeoutMs + 3 * settings.cancelTimeoutMs + 3 * settings.exitTimeoutMs + 2 * settings.quietMs;
}

/** A promise that rejects with the reason of `signal` once it aborts, and how to stop listening. */
function abortion(signal: AbortSignal): { promise: Promise<never>; release: () => void } {
  let onAbort = (): void => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => {});
  return { promise, release: () => signal.removeEventListener('abort', onAbort) };
}

/** Runs `work`, or rejects with the reason of `signal` as soon as it aborts (`work` is then abandoned). */
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  // An abandoned piece of work may still reject later, once its agents are gone.
  work.catch(() => {});
  const aborted = abortion(signal);
  try {
    return await Promise.race([work, aborted.promise]);
  } finally {
    aborted.release();
  }
}

async function runOne<C extends RunContext>(check: Check<C>, context: C, signal: AbortSignal): Promise<CheckResult> {
  signal.throwIfAborted();
  context.beginCheck(check.id);
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const budget = budgetOf(context.settings);
  const overtime = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => resolve(fail(`the check did not finish within ${budget} ms`)), budget);
  });
  let outcome: CheckOutcome;
  try {
    outcome = await unlessAborted(Promise.race([check.run(context), overtime]), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    outcome = error instanceof CheckFailure ? error.outcome : fail(`the check itself failed: ${String((error as Error)?.stack ?? error)}`);
  } finally {
    clearTimeout(timer);
    await context.closeOwn();
  }
  if (outcome.status !== 'pass' && outcome.status !== 'not-applicable' && outcome.evidence === undefined)
    outcome = { ...outcome, evidence: linesOf(context, check.id) };
  const rule = outcome.rule ?? check.rule;
  const { id, group, title } = check;
  return { id, group, title, ...outcome, rule, severity: rule.severity, durationMs: Math.round(performance.now() - start) };
}

/**
 * Runs `checks` in order (final checks last, on what the others saw), after `preflight` (which
 * starts and initializes what the first check uses, and throws when it cannot).
 *
 * @remarks When the deadline passes, the check under way is abandoned and it and the rest are
 * returned in `notRun`. `signal` (the caller's stop) rejects with its reason instead. Either way,
 * and on any error, every process started is ended before this settles.
 * @throws AgentUnusableError when the agent cannot be started or initialized
 */
export async function runChecks<C extends RunContext>(
  checks: readonly Check<C>[],
  context: C,
  preflight: (context: C) => Promise<void>,
  signal: AbortSignal | undefined,
  onResult: (result: CheckResult) => void,
): Promise<RunResults> {
  const { deadlineMs } = context.settings;
  const expiry = new AbortController();
  const deadline = expiry.signal;
  const timer = setTimeout(
    () => expiry.abort(new Error(`the run's deadline (${deadlineMs} ms) passed`)),
    deadlineMs - closeReserveMs(deadlineMs),
  );
  const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const hurry = (): void => context.hurry();
  stop.addEventListener('abort', hurry, { once: true });
  const results: CheckResult[] = [];
  const ordered = [...checks.filter((each) => !each.isFinal), ...checks.filter((each) => each.isFinal)];
  try {
    const first = ordered.find((each) => !each.isFinal) ?? ordered[0];
    if (first) {
      await context.enterGroup(first.group);
      await unlessAborted(preflight(context), stop);
    }
    for (const check of ordered) {
      if (check.isFinal) await context.closeShared();
      else await context.enterGroup(check.group);
      const result = await runOne(check, context, stop);
      results.push(result);
      onResult(result);
    }
    return { results, notRun: [] };
  } catch (error) {
    if (!deadline.aborted || signal?.aborted) throw error;
    return { results, notRun: ordered.filter((check) => !results.some((result) => result.id === check.id)).map((check) => check.id) };
  } finally {
    clearTimeout(timer);
    stop.removeEventListener('abort', hurry);
    // What is left to end did not end with its group: no reason to give it more than a moment.
    hurry();
    await context.closeAll();
  }
}
