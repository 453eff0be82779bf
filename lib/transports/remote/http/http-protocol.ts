/**
 * The Streamable HTTP draft as the official ACP SDK implements it: header names (but the one
 * naming the connection, which WebSocket shares: see `remote-connection.ts`), content types, and
 * which messages belong to a session.
 *
 * @packageDocumentation
 */
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
