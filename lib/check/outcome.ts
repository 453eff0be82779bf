/**
 * The vocabulary of `acp-wire check`: a check's outcome, and the report of a run.
 *
 * @packageDocumentation
 */
import type { Rule, Severity } from './rules';
import type { WireLine } from './wire-line';

/**
 * How one check came out: `pass`; `fail`; `info` (the agent did something its rule allows and a
 * client should know about, e.g. it ignores `$/cancel_request`); or `not-applicable` (the check
 * could not apply to this agent; printed `n/a`).
 */
export type CheckStatus = 'pass' | 'fail' | 'info' | 'not-applicable';

/** How many results of each status a report holds. */
export interface CheckCounts {
  /** Results that passed. */
  readonly pass: number;
  /** Results that failed, whatever their severity. */
  readonly fail: number;
  /** Results worth knowing that break no rule. */
  readonly info: number;
  /** Checks that could not apply to this agent. */
  readonly notApplicable: number;
}

/** The groups of checks, in the order they run and are reported. */
export const CHECK_GROUPS = ['framing', 'json-rpc', 'initialize', 'sessions', 'lifecycle', 'proxy', 'remote'] as const;

/** One group of checks. */
export type CheckGroup = (typeof CHECK_GROUPS)[number];

/** What a check found: its status and, but for `pass`, why (for `pass`, an optional note). */
export interface CheckOutcome {
  /** How the check came out. */
  readonly status: CheckStatus;
  /** For `fail`: the exact message or fact that broke the rule; for `info`: what the agent did; for `not-applicable`: the reason; for `pass`: a note. */
  readonly message?: string;
  /** The rule this outcome is about, when it is not the check's own (a check that looks at several things). */
  readonly rule?: Rule;
  /** The lines that show it, as they crossed (what was sent, what came back), in order. */
  readonly evidence?: readonly WireLine[];
}

/** One line of a report. */
export interface CheckResult extends CheckOutcome {
  /** The check's id, e.g. `json-rpc.id-echo`. */
  readonly id: string;
  /** The group it belongs to (`framing`, `json-rpc`, …). */
  readonly group: CheckGroup;
  /** What the check proves, in a few words. */
  readonly title: string;
  /** The rule the result is about (the check's own, or the one its outcome names). */
  readonly rule: Rule;
  /** The rule's severity: a failure at or above `CheckOptions.failOn` fails the run. */
  readonly severity: Severity;
  /** How long it took, in milliseconds. */
  readonly durationMs: number;
}

/** The report of one run of `acp-wire check`. */
export interface CheckReport {
  /** The agent's command line, as given. */
  readonly command: string;
  /** One result per check run, grouped, in the order of {@link CHECK_GROUPS}. */
  readonly results: readonly CheckResult[];
  /** How many results of each status it holds. */
  readonly counts: CheckCounts;
  /** The lowest severity of a failure that fails the run (`must` by default). */
  readonly failOn: Severity;
  /** The ids of the failures that fail the run: at or above `failOn`, and not in the baseline. */
  readonly failing: readonly string[];
  /** The ids of failures at or above `failOn` the baseline lists: expected, they do not fail the run. */
  readonly expected: readonly string[];
  /** The baseline's entries whose check ran and did not fail: they fail the run until removed. */
  readonly stale: readonly string[];
  /** Whether every check selected ran: false when the run's deadline passed first. */
  readonly isComplete: boolean;
  /** The checks that did not run (the one under way at the deadline, and those after it). */
  readonly notRun: readonly string[];
  /** Whether the run is complete, nothing is in `failing` and nothing in `stale` (the exit code of `acp-wire check` is 0 exactly then). */
  readonly isOk: boolean;
}

/** A passing outcome, with an optional note. */
export function pass(note?: string): CheckOutcome {
  return note === undefined ? { status: 'pass' } : { status: 'pass', message: note };
}

/** A failing outcome and what broke; `rule` when it is not the check's own. */
export function fail(message: string, rule?: Rule): CheckOutcome {
  return rule === undefined ? { status: 'fail', message } : { status: 'fail', message, rule };
}

/** What the agent did that its rule allows, for a client to know; `rule` when it is not the check's own. */
export function info(message: string, rule?: Rule): CheckOutcome {
  return rule === undefined ? { status: 'info', message } : { status: 'info', message, rule };
}

/** `outcome` with `lines` as its evidence (those undefined left out: a line never written or never received). */
export function withEvidence(outcome: CheckOutcome, ...lines: (WireLine | undefined)[]): CheckOutcome {
  const evidence = [...(outcome.evidence ?? []), ...lines.filter((line): line is WireLine => line !== undefined)];
  return { ...outcome, evidence };
}

/** A check that does not apply, and why. */
export function notApplicable(reason: string): CheckOutcome {
  return { status: 'not-applicable', message: reason };
}

/**
 * Thrown inside a check (or the context's helpers) to end it as `fail` (or `n/a`) with this
 * message. It never leaves `checkAgent()`. @internal
 */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
  /** The outcome the check ends with. */
  readonly outcome: CheckOutcome;

  constructor(outcome: CheckOutcome) {
    super(outcome.message);
    this.outcome = outcome;
  }
}
