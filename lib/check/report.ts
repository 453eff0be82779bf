/**
 * A run's results as a {@link CheckReport}: grouped in battery order, counted, and judged against
 * the severity that fails a run.
 *
 * @packageDocumentation
 */
import { ALL_CHECKS } from './battery';
import { CHECK_GROUPS, type CheckCounts, type CheckReport, type CheckResult } from './outcome';
import { isAtLeast, type Severity } from './rules';

/** How a run is judged: the severity that fails it, and the failures expected (a baseline's check ids). */
export interface Judgement {
  readonly failOn?: Severity;
  readonly baseline?: readonly string[];
}

/** The report of `results` (in any order); `notRun` names the selected checks that did not run. */
export function buildReport(
  command: string,
  results: readonly CheckResult[],
  notRun: readonly string[] = [],
  { failOn = 'must', baseline = [] }: Judgement = {},
): CheckReport {
  const order = (result: CheckResult): number =>
    CHECK_GROUPS.indexOf(result.group) * 1000 + ALL_CHECKS.findIndex((check) => check.id === result.id);
  const sorted = [...results].sort((a, b) => order(a) - order(b));
  const count = (status: CheckResult['status']): number => sorted.filter((result) => result.status === status).length;
  const counts: CheckCounts = { pass: count('pass'), fail: count('fail'), info: count('info'), notApplicable: count('not-applicable') };
  const counted = sorted.filter((result) => result.status === 'fail' && isAtLeast(result.severity, failOn)).map((result) => result.id);
  const failing = counted.filter((id) => !baseline.includes(id));
  const expected = counted.filter((id) => baseline.includes(id));
  const stale = sorted
    .filter((result) => baseline.includes(result.id) && (result.status === 'pass' || result.status === 'info'))
    .map((r) => r.id);
  const isComplete = notRun.length === 0;
  const isOk = isComplete && failing.length === 0 && stale.length === 0;
  return { command, results: sorted, counts, failOn, failing, expected, stale, isComplete, notRun, isOk };
}
