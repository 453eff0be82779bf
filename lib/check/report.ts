/**
 * A run's results as a {@link CheckReport}: grouped in battery order, counted, and judged.
 *
 * @packageDocumentation
 */
import { CHECKS } from './battery';
import { CHECK_GROUPS, type CheckReport, type CheckResult, type CheckStatus } from './outcome';

/** The report of `results` (in any order); `notRun` names the selected checks that did not run. */
export function buildReport(command: string, results: readonly CheckResult[], notRun: readonly string[] = []): CheckReport {
  const order = (result: CheckResult): number =>
    CHECK_GROUPS.indexOf(result.group) * 1000 + CHECKS.findIndex((check) => check.id === result.id);
  const sorted = [...results].sort((a, b) => order(a) - order(b));
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, 'n/a': 0 };
  for (const result of sorted) counts[result.status]++;
  const isComplete = notRun.length === 0;
  return { command, results: sorted, counts, isComplete, notRun, isOk: isComplete && counts.fail === 0 };
}
