/**
 * A run's results as a {@link CheckReport}: grouped in battery order, counted, and judged against
 * the severity that fails a run.
 *
 * @packageDocumentation
 */
import { CHECKS } from './battery';
import { CHECK_GROUPS, type CheckCounts, type CheckReport, type CheckResult } from './outcome';
import { isAtLeast, type Severity } from './rules';

/** The report of `results` (in any order); `notRun` names the selected checks that did not run. */
export function buildReport(
  command: string,
  results: readonly CheckResult[],
  notRun: readonly string[] = [],
  failOn: Severity = 'must',
): CheckReport {
  const order = (result: CheckResult): number =>
    CHECK_GROUPS.indexOf(result.group) * 1000 + CHECKS.findIndex((check) => check.id === result.id);
  const sorted = [...results].sort((a, b) => order(a) - order(b));
  const count = (status: CheckResult['status']): number => sorted.filter((result) => result.status === status).length;
  const counts: CheckCounts = { pass: count('pass'), fail: count('fail'), info: count('info'), notApplicable: count('not-applicable') };
  const failing = sorted.filter((result) => result.status === 'fail' && isAtLeast(result.severity, failOn)).map((result) => result.id);
  const isComplete = notRun.length === 0;
  return { command, results: sorted, counts, failOn, failing, isComplete, notRun, isOk: isComplete && failing.length === 0 };
}
