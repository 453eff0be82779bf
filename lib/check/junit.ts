/**
 * A check report as JUnit XML (`acp-wire check --junit FILE`), the format CI systems show as
 * tests: one test suite per group, one test case per check. A failure that fails the run is a
 * `<failure>` (its message, its rule, its evidence); a failure the run tolerates (below
 * `--fail-on`, or expected by the baseline) and `info` are `<system-out>` of a passing case; `n/a`
 * is `<skipped>`; a stale baseline entry is a `<failure>`; a check not run is an `<error>`.
 *
 * @packageDocumentation
 */
import { traceBody, traceHead } from './evidence';
import { CHECK_GROUPS, type CheckReport, type CheckResult } from './outcome';
import type { AgentUnusableError } from './preflight';

/** Text for XML: the five special characters escaped, characters XML 1.0 cannot hold dropped. */
function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** The body of a failure or note: the message, the rule, the evidence as trace lines. */
function details(result: CheckResult): string {
  const { rule } = result;
  const evidence = (result.evidence ?? []).map((line) => `${traceHead(line)}${traceBody(line).toString('utf8')}`);
  return [result.message ?? '', `rule (${rule.source}, ${rule.severity}): "${rule.quote}" ${rule.url}`, ...evidence].join('\n');
}

function testCase(report: CheckReport, result: CheckResult): string {
  const head = `    <testcase classname="acp-wire check.${result.group}" name="${xml(result.id)}" time="${seconds(result.durationMs)}">`;
  const severity = result.severity.toUpperCase();
  let body: string;
  if (report.failing.includes(result.id)) {
    body = `<failure type="${severity}" message="${xml(result.message ?? '')}">${xml(details(result))}</failure>`;
  } else if (report.stale.includes(result.id)) {
    body = `<failure type="stale baseline entry" message="${xml(`${result.id} passes now: remove it from the baseline`)}"/>`;
  } else if (result.status === 'not-applicable') {
    body = `<skipped message="${xml(result.message ?? '')}"/>`;
  } else if (result.status === 'fail' || result.status === 'info') {
    const why = report.expected.includes(result.id)
      ? 'fails, expected by the baseline'
      : result.status === 'info'
        ? 'info'
        : `fails, below --fail-on ${report.failOn}`;
    body = `<system-out>${xml(`${why} (${severity}): ${details(result)}`)}</system-out>`;
  } else {
    return `${head.slice(0, -1)}/>`;
  }
  return `${head}\n      ${body}\n    </testcase>`;
}

/** The report as a JUnit XML document. */
export function toJunitXml(report: CheckReport): string {
  const suites: string[] = [];
  for (const group of CHECK_GROUPS) {
    const results = report.results.filter((result) => result.group === group);
    const notRun = report.notRun.filter((id) => id.startsWith(`${group}.`));
    if (results.length === 0 && notRun.length === 0) continue;
    const failures = results.filter((result) => report.failing.includes(result.id) || report.stale.includes(result.id)).length;
    const skipped = results.filter((result) => result.status === 'not-applicable').length;
    const time = seconds(results.reduce((sum, result) => sum + result.durationMs, 0));
    const cases = [
      ...results.map((result) => testCase(report, result)),
      ...notRun.map(
        (id) =>
          `    <testcase classname="acp-wire check.${group}" name="${xml(id)}">\n      <error message="not run: the run ended first"/>\n    </testcase>`,
      ),
    ];
    const attributes = `name="${group}" tests="${cases.length}" failures="${failures}" errors="${notRun.length}" skipped="${skipped}" time="${time}"`;
    suites.push(`  <testsuite ${attributes}>\n${cases.join('\n')}\n  </testsuite>`);
  }
  const name = xml(`acp-wire check: ${report.command}`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${name}">\n${suites.join('\n')}\n</testsuites>\n`;
}

/** A JUnit XML document for a run that could not start its agent: one case, in error. */
export function toJunitUnusable(command: string, error: AgentUnusableError): string {
  const testCase = `    <testcase classname="acp-wire check" name="the agent starts and answers initialize">\n      <error type="${error.reason}" message="${xml(error.message)}">${xml(error.stderr)}</error>\n    </testcase>`;
  const suite = `  <testsuite name="preflight" tests="1" failures="0" errors="1" skipped="0" time="0">\n${testCase}\n  </testsuite>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xml(`acp-wire check: ${command}`)}">\n${suite}\n</testsuites>\n`;
}
