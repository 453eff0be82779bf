/**
 * A check report as text for a person: one line per check under its group, the message of a
 * `fail` or `n/a` (or the note of a `pass`) after it, and the counts.
 *
 * @packageDocumentation
 */
import { CHECK_GROUPS, type CheckReport } from './outcome';

/** The report as lines of text (ending with a newline). */
export function formatCheckReport(report: CheckReport): string {
  const width = Math.max(0, ...report.results.map((result) => result.id.length));
  const out = [`acp-wire check: ${report.command}`];
  for (const group of CHECK_GROUPS) {
    const results = report.results.filter((result) => result.group === group);
    if (results.length === 0) continue;
    out.push('', group);
    for (const result of results) {
      const note = result.message === undefined ? '' : ` (${result.message})`;
      out.push(`  ${result.status.padEnd(4)}  ${result.id.padEnd(width)}  ${result.title}${result.status === 'pass' ? note : ''}`);
      if (result.status !== 'pass' && result.message !== undefined) out.push(`${' '.repeat(width + 10)}${result.message}`);
    }
  }
  if (!report.isComplete) out.push('', `not run: ${report.notRun.join(', ')}`);
  const { pass, fail } = report.counts;
  out.push('', `${report.results.length} checks: ${pass} pass, ${fail} fail, ${report.counts['n/a']} n/a`);
  return `${out.join('\n')}\n`;
}
