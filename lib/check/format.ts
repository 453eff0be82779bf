/**
 * A check report as text for a person: one line per check under its group (status, severity, id,
 * title), then for what did not pass its message and the rule it is about, and the verdict.
 *
 * @packageDocumentation
 */
import { CHECK_GROUPS, type CheckReport, type CheckResult } from './outcome';

/** How a status is printed. */
const STATUS_TEXT: Record<CheckResult['status'], string> = { pass: 'pass', fail: 'fail', info: 'info', 'not-applicable': 'n/a' };

function resultLines(result: CheckResult, width: number): string[] {
  const note = result.status === 'pass' && result.message !== undefined ? ` (${result.message})` : '';
  const head = `  ${STATUS_TEXT[result.status].padEnd(4)}  ${result.severity.toUpperCase().padEnd(8)}  ${result.id.padEnd(width)}  ${result.title}${note}`;
  if (result.status === 'pass' || result.message === undefined) return [head];
  const indent = ' '.repeat(8);
  const lines = [head, `${indent}${result.message}`];
  if (result.status !== 'not-applicable') {
    const { rule } = result;
    lines.push(`${indent}rule (${rule.source}, ${rule.severity}): "${rule.quote}" ${rule.url}`);
  }
  return lines;
}

/** The report as lines of text (ending with a newline). */
export function formatCheckReport(report: CheckReport): string {
  const width = Math.max(0, ...report.results.map((result) => result.id.length));
  const out = [`acp-wire check: ${report.command}`];
  for (const group of CHECK_GROUPS) {
    const results = report.results.filter((result) => result.group === group);
    if (results.length === 0) continue;
    out.push('', group);
    for (const result of results) out.push(...resultLines(result, width));
  }
  if (!report.isComplete) out.push('', `not run: ${report.notRun.join(', ')}`);
  const { pass, fail, info, notApplicable } = report.counts;
  out.push('', `${report.results.length} checks: ${pass} pass, ${fail} fail, ${info} info, ${notApplicable} n/a`);
  if (report.failing.length > 0) out.push(`failing the run (--fail-on ${report.failOn}): ${report.failing.join(', ')}`);
  if (report.expected.length > 0) out.push(`expected by the baseline: ${report.expected.join(', ')}`);
  if (report.stale.length > 0) out.push(`stale baseline entries (their checks pass now; remove them): ${report.stale.join(', ')}`);
  if (report.failing.length === 0 && report.expected.length === 0 && fail > 0)
    out.push(`no failure at or above --fail-on ${report.failOn}`);
  return `${out.join('\n')}\n`;
}
