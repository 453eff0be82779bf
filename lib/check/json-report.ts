/**
 * A check report as JSON for CI (`acp-wire check --json`): versioned (`schemaVersion`), naming
 * the tool and its version, each result with its rule and its evidence (the lines as they crossed).
 *
 * @packageDocumentation
 */
import { packageVersion } from '../support/package-version';
import { type EvidenceLine, evidenceOf } from './evidence';
import type { CheckCounts, CheckGroup, CheckReport, CheckStatus } from './outcome';
import type { AgentUnusableError } from './preflight';
import type { Rule, Severity } from './rules';

/** The version of the JSON report's shape: raised when a member changes meaning or goes away. */
export const CHECK_REPORT_SCHEMA_VERSION = 1;

/** The tool that wrote a JSON report. */
export interface ReportTool {
  readonly name: 'acp-wire';
  readonly version: string;
}

/** One result in a JSON report. */
export interface JsonCheckResult {
  readonly id: string;
  readonly group: CheckGroup;
  readonly title: string;
  readonly status: CheckStatus;
  readonly severity: Severity;
  readonly rule: Rule;
  readonly message?: string;
  readonly durationMs: number;
  /** For `fail` and `info`: the lines that show it, exactly as they crossed. */
  readonly evidence: readonly EvidenceLine[];
}

/** `acp-wire check --json`'s document for a run that ran. */
export interface JsonCheckReport {
  readonly schemaVersion: number;
  readonly tool: ReportTool;
  readonly command: string;
  readonly isOk: boolean;
  readonly isComplete: boolean;
  readonly failOn: Severity;
  readonly counts: CheckCounts;
  readonly failing: readonly string[];
  readonly expected: readonly string[];
  readonly stale: readonly string[];
  readonly notRun: readonly string[];
  readonly results: readonly JsonCheckResult[];
}

/** `acp-wire check --json`'s document when the agent could not be started or initialized (exit 3). */
export interface JsonUnusableReport {
  readonly schemaVersion: number;
  readonly tool: ReportTool;
  readonly command: string;
  readonly isOk: false;
  readonly error: { readonly code: string; readonly reason: string; readonly message: string; readonly stderr: string };
}

const tool = (): ReportTool => ({ name: 'acp-wire', version: packageVersion() });

/** The JSON document of `report`. */
export function toJsonReport(report: CheckReport): JsonCheckReport {
  const { command, isOk, isComplete, failOn, counts, failing, expected, stale, notRun } = report;
  const results = report.results.map(({ id, group, title, status, severity, rule, message, durationMs, evidence }) => ({
    id,
    group,
    title,
    status,
    severity,
    rule,
    ...(message === undefined ? {} : { message }),
    durationMs,
    evidence: (evidence ?? []).map(evidenceOf),
  }));
  return {
    schemaVersion: CHECK_REPORT_SCHEMA_VERSION,
    tool: tool(),
    command,
    isOk,
    isComplete,
    failOn,
    counts,
    failing,
    expected,
    stale,
    notRun,
    results,
  };
}

/** The JSON document of a run that could not start its agent. */
export function toJsonUnusable(command: string, error: AgentUnusableError): JsonUnusableReport {
  const { code, reason, message, stderr } = error;
  return { schemaVersion: CHECK_REPORT_SCHEMA_VERSION, tool: tool(), command, isOk: false, error: { code, reason, message, stderr } };
}
