/**
 * The control messages of a resumable WebSocket (`stream/resume`, `stream/resumed`,
 * `stream/resume_failed`, `stream/ack`): their names, their text, and how both ends tell them
 * from other frames.
 *
 * @packageDocumentation
 */

/** The first frame of a WebSocket that resumes a connection: `{connectionId, cursor}` (cursor `null`: nothing received yet). */
export const STREAM_RESUME_METHOD = 'stream/resume';
/** The server's answer to a resume it can serve: `{received}`, how many client messages it has applied. */
export const STREAM_RESUMED_METHOD = 'stream/resumed';
/** The server's answer to a resume it cannot serve: `{reason}`; the socket then closes. */
export const STREAM_RESUME_FAILED_METHOD = 'stream/resume_failed';
/**
 * The periodic acknowledgement on a resumable WebSocket: from the server `{received}` (how many
 * client messages it has applied, so the client forgets them), from the client `{cursor}` (the
 * last message it received, so the server's replay buffer lets go of it and those before).
 */
export const STREAM_ACK_METHOD = 'stream/ack';

/**
 * The method of a control message of a resumable WebSocket (`stream/…`), or `undefined` for any
 * other frame. Cheap for ordinary frames: only text holding `"stream/` is parsed.
 *
 * @internal
 */
export function controlOf(text: string): { method: string; params: Record<string, unknown> } | undefined {
  if (!text.includes('"stream/')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || 'id' in value) return undefined;
  const { method, params } = value as { method?: unknown; params?: unknown };
  if (typeof method !== 'string' || !method.startsWith('stream/')) return undefined;
  return { method, params: typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {} };
}

/** The text of a control message (members in this order, no space: see {@link isControlCandidate}). @internal */
export function controlMessage(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}

/** The bytes every control message starts with, as {@link controlMessage} writes it. */
const CONTROL_PREFIX = Buffer.from('{"jsonrpc":"2.0","method":"stream/');

/**
 * Whether a frame may be a control message of a resumable WebSocket: it starts as
 * {@link controlMessage} writes one. Looks at bytes 18 and 28 first (where an answer or a request, and
 * most notifications, differ from one), then compares at most 34 bytes, so that the frames of a
 * live stream are told from control messages without being decoded. A frame that passes is
 * decoded and checked by {@link controlOf}; a peer's own `stream/…` message then still differs by
 * its cursor (server to client) or is the transport's (client to server: reserved).
 *
 * @internal
 */
export function isControlCandidate(frame: Buffer): boolean {
  const length = CONTROL_PREFIX.length;
  // The bytes where answers (18: `i` of `"id"`) and most notifications (28: `e` of `"session/`) first differ.
  if (frame.length < length || frame[18] !== CONTROL_PREFIX[18] || frame[28] !== CONTROL_PREFIX[28]) return false;
  for (let i = 0; i < length; i++) if (frame[i] !== CONTROL_PREFIX[i]) return false;
  return true;
}
