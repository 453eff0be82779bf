/**
 * One check of an `acp-wire check` battery: what it is called, which group it is in, the rule it
 * holds the agent to, and how it runs with its context.
 *
 * @packageDocumentation
 */
import type { CheckContext } from './context';
import type { CheckGroup, CheckOutcome } from './outcome';
import type { Rule } from './rules';

/** One check of a battery, run with a context of type `C` (the process checks' {@link CheckContext} by default). */
export interface Check<C = CheckContext> {
  /** `group.name`, stable: `--only` and the report name checks by it. */
  readonly id: string;
  readonly group: CheckGroup;
  /** What it proves when it passes. */
  readonly title: string;
  /** The rule it holds the agent to. */
  readonly rule: Rule;
  /** Whether it runs after every other check, on what all of them saw. */
  readonly isFinal?: boolean;
  /** Runs the check. A thrown `CheckFailure` is a `fail` with its message. */
  run(context: C): Promise<CheckOutcome>;
}
