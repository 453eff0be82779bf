/**
 * Baselines: the failures an agent's authors expect today, by check id, in a file kept beside the
 * agent. A run then fails on a failure the baseline does not list, and on an entry whose check now
 * passes (stale: the baseline can be tightened), so a team can adopt `acp-wire check` at once and
 * raise the bar as it fixes what it finds.
 *
 * The file is text: one check id per line, anything after `#` a comment, blank lines ignored.
 *
 * @packageDocumentation
 */
import type { CheckReport } from './outcome';

/** The first line of a baseline file `formatBaseline` writes. */
const HEADER = '# acp-wire check baseline: the failures expected today, one check id per line (`#` starts a comment)';

/**
 * The check ids a baseline file lists, in order, each once.
 *
 * @throws RangeError naming the line of an entry that is not one word, or that names no check of `known`
 */
export function parseBaseline(text: string, known: readonly string[]): string[] {
  const ids: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') return;
    if (/\s/.test(line)) throw new RangeError(`baseline line ${index + 1}: one check id per line, got ${JSON.stringify(line)}`);
    if (!known.includes(line)) throw new RangeError(`baseline line ${index + 1}: no check named ${JSON.stringify(line)}`);
    if (!ids.includes(line)) ids.push(line);
  });
  return ids;
}

/** A baseline file listing the failures of `report` that fail a run (at or above its `failOn`), each with its message as a comment. */
export function formatBaseline(report: CheckReport): string {
  const lines = [HEADER];
  for (const result of report.results) {
    if (result.status !== 'fail' || !(report.failing.includes(result.id) || report.expected.includes(result.id))) continue;
    const why = (result.message ?? '').replace(/\s+/g, ' ').slice(0, 160);
    lines.push(`${result.id}  # ${result.severity.toUpperCase()}: ${why}`);
  }
  return `${lines.join('\n')}\n`;
}
