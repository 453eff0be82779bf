/**
 * The vocabulary of `acp-wire check`: a check, its outcome, and the report of a run.
 *
 * @packageDocumentation
 */
import type { CheckContext } from './context';

/** How one check came out: `pass`, `fail`, or `n/a` (it could not apply to this agent). */
export type CheckStatus = 'pass' | 'fail' | 'n/a';

/** The groups of checks, in the order they run and are reported. */
export const CHECK_GROUPS = ['framing', 'json-rpc', 'initialize', 'sessions', 'lifecycle'] as const;

/** One group of checks. */
export type CheckGroup = (typeof CHECK_GROUPS)[number];

/** What a check found: its status and, for `fail` and `n/a`, why (for `pass`, an optional note). */
export interface CheckOutcome {
  /** `pass`, `fail` or `n/a`. */
  readonly status: CheckStatus;
  /** For `fail`: the exact message or fact that broke the rule; for `n/a`: the reason; for `pass`: a note. */
  readonly message?: string;
}

/** One line of a report. */
export interface CheckResult extends CheckOutcome {
  /** The check's id, e.g. `json-rpc.id-echo`. */
  readonly id: string;
  /** The group it belongs to (`framing`, `json-rpc`, …). */
  readonly group: CheckGroup;
  /** What the check proves, in a few words. */
  readonly title: string;
  /** How long it took, in milliseconds. */
  readonly durationMs: number;
}

/** The report of one run of `acp-wire check`. */
export interface CheckReport {
  /** The agent's command line, as given. */
  readonly command: string;
  /** One result per check run, grouped, in the order of {@link CHECK_GROUPS}. */
  readonly results: readonly CheckResult[];
  /** How many checks passed, failed, and did not apply. */
  readonly counts: Readonly<Record<CheckStatus, number>>;
  /** Whether every check selected ran: false when the run's deadline passed first. */
  readonly isComplete: boolean;
  /** The checks that did not run (the one under way at the deadline, and those after it). */
  readonly notRun: readonly string[];
  /** Whether the run is complete and no check failed (the exit code of `acp-wire check` is 0 exactly then). */
  readonly isOk: boolean;
}

/** One check of the battery. */
export interface Check {
  /** `group.name`, stable: `--only` and the report name checks by it. */
  readonly id: string;
  readonly group: CheckGroup;
  /** What it proves when it passes. */
  readonly title: string;
  /** Whether it runs after every other check, on what all of them saw. */
  readonly isFinal?: boolean;
  /** Runs the check. A thrown {@link CheckFailure} is a `fail` with its message. */
  run(context: CheckContext): Promise<CheckOutcome>;
}

/** A passing outcome, with an optional note. */
export function pass(note?: string): CheckOutcome {
  return note === undefined ? { status: 'pass' } : { status: 'pass', message: note };
}

/** A failing outcome and what broke. */
export function fail(message: string): CheckOutcome {
  return { status: 'fail', message };
}

/** A check that does not apply, and why. */
export function notApplicable(reason: string): CheckOutcome {
  return { status: 'n/a', message: reason };
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
