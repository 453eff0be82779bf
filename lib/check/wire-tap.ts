/**
 * The check's session as trace events (docs/tracing.md): every JSON message the check and the
 * agent exchanged, in the trace-file format the viewer reads (`acp-wire trace view FILE`).
 *
 * @packageDocumentation
 */
import type { JsonObject, JsonValue, RequestId } from '../jsonrpc/message';
import { AGENT_COMPONENT, CLIENT_COMPONENT, type TraceEvent } from '../trace/events';
import { redactCredentials } from '../trace/redact';

/** Receives every JSON message of the check, both ways. */
export interface WireTap {
  /** A message the check wrote to the agent, at `atMs` since the check began. */
  out(message: JsonObject, atMs: number): void;
  /** A message the agent wrote, at `atMs` since the check began. */
  in(message: JsonObject, atMs: number): void;
}

/** A {@link WireTap} that turns each message into a {@link TraceEvent} for `sink`. */
export function traceTap(sink: (event: TraceEvent) => void): WireTap {
  return {
    out: (message, atMs) => sink(toEvent(message, atMs / 1000, CLIENT_COMPONENT, AGENT_COMPONENT)),
    in: (message, atMs) => sink(toEvent(message, atMs / 1000, AGENT_COMPONENT, CLIENT_COMPONENT)),
  };
}

function idOf(message: JsonObject): RequestId {
  const id = message.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function toEvent(message: JsonObject, ts: number, from: string, to: string): TraceEvent {
  const params: JsonValue = redactCredentials(message.params ?? null);
  const sessionId = typeof params === 'object' && params !== null && !Array.isArray(params) ? params.sessionId : undefined;
  const session = typeof sessionId === 'string' ? { session: sessionId } : {};
  if (typeof message.method !== 'string') {
    const isError = message.error !== undefined;
    return {
      type: 'response',
      ts,
      from,
      to,
      id: idOf(message),
      is_error: isError,
      payload: redactCredentials((isError ? message.error : message.result) ?? null),
    };
  }
  if (message.id === undefined) return { type: 'notification', ts, protocol: 'acp', from, to, method: message.method, ...session, params };
  return { type: 'request', ts, protocol: 'acp', from, to, id: idOf(message), method: message.method, ...session, params };
}
