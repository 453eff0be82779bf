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
  /** Always `acp-wire`. */
  readonly name: 'acp-wire';
  /** The version of acp-wire that ran the checks. */
  readonly version: string;
}

/** One result in a JSON report. */
export interface JsonCheckResult {
  /** The check's id, e.g. `json-rpc.id-echo`. */
  readonly id: string;
  /** The group it belongs to. */
  readonly group: CheckGroup;
  /** What the check proves, in a few words. */
  readonly title: string;
  /** How it came out. */
  readonly status: CheckStatus;
  /** The rule's severity. */
  readonly severity: Severity;
  /** The rule the result is about. */
  readonly rule: Rule;
  /** Why it failed, what the agent did, or why the check did not apply (absent for most passes). */
  readonly message?: string;
  /** How long it took, in milliseconds. */
  readonly durationMs: number;
  /** For `fail` and `info`: the lines that show it, exactly as they crossed. */
  readonly evidence: readonly EvidenceLine[];
}

/** `acp-wire check --json`'s document for a run that ran. */
export interface JsonCheckReport {
  /** {@link CHECK_REPORT_SCHEMA_VERSION} when written. */
  readonly schemaVersion: number;
  /** The tool that wrote it. */
  readonly tool: ReportTool;
  /** The agent's command line, as given. */
  readonly command: string;
  /** Whether the run passed (exit code 0). */
  readonly isOk: boolean;
  /** Whether every check selected ran before the deadline. */
  readonly isComplete: boolean;
  /** The lowest severity of a failure that fails the run. */
  readonly failOn: Severity;
  /** How many results of each status. */
  readonly counts: CheckCounts;
  /** The failures that fail the run. */
  readonly failing: readonly string[];
  /** The failures the baseline expects. */
  readonly expected: readonly string[];
  /** The baseline's entries that no longer fail. */
  readonly stale: readonly string[];
  /** The checks the deadline left unrun. */
  readonly notRun: readonly string[];
  /** One entry per check run, in report order. */
  readonly results: readonly JsonCheckResult[];
}

/** `acp-wire check --json`'s document when the agent could not be started or initialized (exit 3). */
export interface JsonUnusableReport {
  /** {@link CHECK_REPORT_SCHEMA_VERSION} when written. */
  readonly schemaVersion: number;
  /** The tool that wrote it. */
  readonly tool: ReportTool;
  /** The agent's command line, as given. */
  readonly command: string;
  /** Always false: an unusable agent fails the run (exit code 3). */
  readonly isOk: false;
  /** Why the agent is unusable. */
  readonly error: {
    /** The error's code, `ACP_WIRE_CHECK_AGENT_UNUSABLE`. */
    readonly code: string;
    /** Which step failed (`not-started`, `no-answer`, …), as {@link AgentUnusableError.reason}. */
    readonly reason: string;
    /** What happened, in words. */
    readonly message: string;
    /** The end of the agent's stderr, when it wrote any. */
    readonly stderr: string;
  };
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
