/**
 * The Streamable HTTP draft as the official ACP SDK implements it: header names, which messages
 * belong to a session, and the small JSON helpers both sides use to route messages.
 *
 * @packageDocumentation
 */
import type { RequestId } from '../../jsonrpc/message';

/** The header naming an HTTP ACP connection, set by the server on the `initialize` answer. */
export const HEADER_CONNECTION_ID = 'Acp-Connection-Id';
/** The header that resumes an event stream after the event with that `id:` (a cursor). */
export const HEADER_LAST_EVENT_ID = 'Last-Event-ID';
/**
 * The header a reconnecting client stamps on each POST after `initialize`: its messages' sequence
 * number (1, 2, …), so that a POST sent again after a dropped response is not applied twice.
 */
export const HEADER_CLIENT_SEQ = 'Acp-Client-Seq';
/**
 * The header a reconnecting client puts on a POST now and then (every 16 events of a stream): the
 * last event id received on the event stream that POST belongs to (its session's, else the
 * connection's), so that the server's replay buffer lets go of the events up to it.
 */
export const HEADER_EVENTS_RECEIVED = 'Acp-Events-Received';
/**
 * The header of a reconnecting client's heartbeat (an empty `POST`, answered 204) and of its event
 * streams' `GET`s: its heartbeat interval in milliseconds. A server that hears nothing from that
 * connection's client for {@link HEARTBEAT_MISSES} intervals drops its event streams.
 */
export const HEADER_HEARTBEAT = 'Acp-Heartbeat';
/** How many heartbeat intervals of silence make a server drop a connection's event streams. */
export const HEARTBEAT_MISSES = 3;
/** The header naming the session a request or a session stream belongs to. */
export const HEADER_SESSION_ID = 'Acp-Session-Id';
/** The content type of every POST body and `initialize` answer. */
export const JSON_CONTENT_TYPE = 'application/json';
/** The content type of the GET streams. */
export const EVENT_STREAM_CONTENT_TYPE = 'text/event-stream';

/** Methods that always need an `Acp-Session-Id` header (as in the SDK). */
const SESSION_SCOPED_METHODS = new Set([
  'session/cancel',
  'session/close',
  'session/delete',
  'session/fork',
  'session/load',
  'session/prompt',
  'session/resume',
  'session/set_config_option',
  'session/set_mode',
  'session/set_model',
]);

/** Whether a method needs the session header. */
export function isSessionScoped(method: string): boolean {
  return SESSION_SCOPED_METHODS.has(method);
}

/** The parts of a JSON-RPC message the routing looks at. */
export interface RoutedMessage {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
  readonly result?: unknown;
}

/** Parses one line as an object, or `undefined` when it is not a JSON object. */
export function parseRouted(line: string): RoutedMessage | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as RoutedMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** `params.sessionId` when it is a string. */
export function sessionIdOf(message: RoutedMessage): string | undefined {
  const params = message.params as { sessionId?: unknown } | undefined;
  return typeof params === 'object' && params !== null && typeof params.sessionId === 'string' ? params.sessionId : undefined;
}

/** `result.sessionId` of a response (e.g. `session/new`), when it is a string. */
export function resultSessionIdOf(message: RoutedMessage): string | undefined {
  const result = message.result as { sessionId?: unknown } | undefined;
  return typeof result === 'object' && result !== null && typeof result.sessionId === 'string' ? result.sessionId : undefined;
}

/** A map key for a request id that keeps `1` and `"1"` apart; `undefined` for an invalid id. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number') return `n:${id}`;
  if (id === null) return 'null';
  return undefined;
}

/** Whether the message is a request (has both `method` and `id`). */
export function isRequest(message: RoutedMessage): message is RoutedMessage & { method: string; id: RequestId } {
  return typeof message.method === 'string' && 'id' in message;
}

/** Whether the message is a response (an `id`, no `method`). */
export function isResponse(message: RoutedMessage): boolean {
  return message.method === undefined && 'id' in message;
}
