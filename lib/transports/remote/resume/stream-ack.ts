/**
 * The acknowledgements of a resumable WebSocket (`stream/ack`): when each side sends one, their
 * text, and reading them back from a frame without decoding it.
 *
 * @packageDocumentation
 */
import { CLOSE_BRACE, QUOTE } from '../../../framing/json-text';
import { STREAM_ACK_METHOD } from './control-messages';

/**
 * A resumable WebSocket's side acknowledges what it received after this many messages… (so few
 * that what the other side keeps rarely lives through two young collections, which would move it
 * to the old generation; bench/README.md gives the intervals measured)
 */
const ACK_EVERY_MESSAGES = 256;
/** …or after this many bytes of them, whichever comes first (bounding what the other side keeps). */
const ACK_EVERY_BYTES = 1024 * 1024;

/**
 * When one side of a resumable WebSocket acknowledges what it received (`stream/ack`): every
 * {@link ACK_EVERY_MESSAGES} messages, or sooner once they reach {@link ACK_EVERY_BYTES} bytes, so
 * that the other side lets go of what it keeps for a resume (a few round trips' worth of small
 * messages, at most about a mebibyte of large ones).
 *
 * @internal
 */
export class AckSchedule {
  #messages = 0;
  #bytes = 0;

  /** Counts a message of `bytes` bytes received; true when an acknowledgement is due now (the count starts again). */
  received(bytes: number): boolean {
    if (++this.#messages < ACK_EVERY_MESSAGES && (this.#bytes += bytes) < ACK_EVERY_BYTES) return false;
    this.#messages = 0;
    this.#bytes = 0;
    return true;
  }
}

/** What the server's acknowledgement starts with: its `received` count follows, then `}}`. */
const RECEIVED_HEAD = `{"jsonrpc":"2.0","method":"${STREAM_ACK_METHOD}","params":{"received":`;
/** What the client's acknowledgement starts with: its cursor's digits follow, then `"}}`. */
const CURSOR_HEAD = `{"jsonrpc":"2.0","method":"${STREAM_ACK_METHOD}","params":{"cursor":"`;
const RECEIVED_HEAD_BYTES = Buffer.from(RECEIVED_HEAD);
const CURSOR_HEAD_BYTES = Buffer.from(CURSOR_HEAD);
/** The most digits read: every decimal integer up to 15 digits is a safe integer. */
const MAX_DIGITS = 15;

/**
 * The server's acknowledgement of the first `received` client messages, as the text
 * `controlMessage('stream/ack', { received })` would be.
 *
 * @internal
 */
export function receivedAckText(received: number): string {
  return `${RECEIVED_HEAD}${received}}}`;
}

/**
 * The client's acknowledgement of every message up to `cursor`, as the text
 * `controlMessage('stream/ack', { cursor: String(cursor) })` would be.
 *
 * @internal
 */
export function cursorAckText(cursor: number): string {
  return `${CURSOR_HEAD}${cursor}"}}`;
}

/**
 * The count of a server acknowledgement written as {@link receivedAckText} writes it, or -1 for
 * any other frame (which the caller then parses as JSON).
 *
 * @remarks Acknowledgements come once every few hundred messages, when none of the code that
 * decodes and parses a control message is in the processor's caches any more: reading these
 * bytes in place costs a fraction of that.
 * @internal
 */
export function readReceivedAck(frame: Buffer): number {
  return readAck(frame, RECEIVED_HEAD_BYTES, false);
}

/**
 * The cursor of a client acknowledgement written as {@link cursorAckText} writes it, or -1 for
 * any other frame (which the caller then parses as JSON). See {@link readReceivedAck}.
 *
 * @internal
 */
export function readCursorAck(frame: Buffer): number {
  return readAck(frame, CURSOR_HEAD_BYTES, true);
}

/**
 * The decimal integer after `head` in `frame` when the frame is exactly `head`, the integer's
 * digits (no leading zero, at most {@link MAX_DIGITS}), a quote when `isQuoted`, and `}}`; else -1.
 */
function readAck(frame: Buffer, head: Buffer, isQuoted: boolean): number {
  const first = head.length;
  const tail = isQuoted ? 3 : 2;
  if (frame.length < first + 1 + tail || frame.length > first + MAX_DIGITS + tail) return -1;
  if (frame.compare(head, 0, first, 0, first) !== 0) return -1;
  const end = frame.length - tail;
  // A leading zero is not JSON (a count) nor a cursor this library writes: left to the parser.
  if (frame[first] === 0x30 && end > first + 1) return -1;
  let n = 0;
  for (let i = first; i < end; i++) {
    const digit = frame[i]! - 0x30;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  if (isQuoted && frame[end] !== QUOTE) return -1;
  return frame[frame.length - 2] === CLOSE_BRACE && frame[frame.length - 1] === CLOSE_BRACE ? n : -1;
}
