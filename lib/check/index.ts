/**
 * `acp-wire/check`: `acp-wire check` as a library: run the protocol checks against an agent
 * command, a proxy or a remote URL, and format the report as text, JSON or JUnit XML, with
 * baselines of known failures.
 *
 * @packageDocumentation
 */
export { checkAgent, checkProxy } from './run';
export type { CheckOptions } from './run';
export { checkRemote } from './remote-run';
export type { RemoteCheckOptions } from './remote-run';
export { CHECK_GROUPS } from './outcome';
export type { CheckCounts, CheckGroup, CheckOutcome, CheckReport, CheckResult, CheckStatus } from './outcome';
export type { Rule, Severity } from './rules';
export { AgentUnusableError } from './preflight';
export type { AgentUnusableReason } from './preflight';
export { formatCheckReport } from './format';
export { formatBaseline, parseBaseline } from './baseline';
export { CHECK_REPORT_SCHEMA_VERSION, toJsonReport } from './json-report';
export type { JsonCheckReport, JsonCheckResult, JsonUnusableReport, ReportTool } from './json-report';
export type { EvidenceLine } from './evidence';
export type { LineDirection, WireLine } from './wire-line';
export { toJunitXml } from './junit';
