/**
 * `acp-wire/trace`: tracing a chain's traffic and reading it back: trace events and their schema,
 * trace files, the live store and its viewer, credential redaction, W3C trace context in `_meta`,
 * and the OpenTelemetry glue. A conductor takes its trace options from `acp-wire/chain`; this entry
 * is for programs that write, read, serve or propagate traces themselves.
 *
 * @packageDocumentation
 */
export { AGENT_COMPONENT, CLIENT_COMPONENT, TRACE_EVENT_SCHEMA, proxyComponentName } from './events';
export type { NotificationTraceEvent, RequestTraceEvent, ResponseTraceEvent, TraceEvent, TraceProtocol } from './events';
export { TraceFileWriter, parseTraceText, readTraceFile } from './file';
export { TraceStore } from './store';
export type { TraceStoreOptions } from './store';
export { serveTraceViewer } from './server';
export type { TraceViewer, TraceViewerOptions } from './server';
export { CREDENTIAL_ENV_WORDS, CREDENTIAL_QUERY_KEYS, REDACTED, redactCredentials } from './redact';
export {
  BAGGAGE_META_KEY,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
  childTraceparent,
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  traceContextOf,
  withChildSpan,
  withTraceContext,
} from './context';
export type { TraceContextMeta, TraceParent } from './context';
export { automaticAnswerOf } from './otel';
export type { AutomaticAnswer } from './otel';
