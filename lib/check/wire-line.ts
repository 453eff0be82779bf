/**
 * One line an agent under check wrote on its stdout, as received: its bytes, whether they are
 * UTF-8, the JSON object they hold (if they hold one), and the text of its `id` member.
 *
 * @packageDocumentation
 */
import { findRawId } from '../framing/raw-id';
import { isJsonObject, type JsonObject } from '../jsonrpc/message';

/**
 * Which way a line went: `in` from the process's stdout, `out` to its stdin, `err` on its stderr;
 * `event` is the run's own note about the process (started, stdout ended, exited).
 */
export type LineDirection = 'in' | 'out' | 'err' | 'event';

/** Where a line was seen: its direction, the process, and the check under way. */
export interface LinePlace {
  /** Which way it went: {@link LineDirection}. */
  readonly direction: LineDirection;
  /** The process, as the run names it (`agent-3`). */
  readonly process: string;
  /** The id of the check under way (`preflight` before the first). */
  readonly check: string;
}

/** One line of an agent's stdout (or one the check wrote to its stdin, or one of its stderr). */
export interface WireLine extends LinePlace {
  /** Milliseconds since the run began. */
  readonly at: number;
  /** The line's bytes, without its `\n` (a `\r` before it kept). */
  readonly bytes: Buffer;
  /** The line decoded as UTF-8, without a final `\r`. */
  readonly text: string;
  /** Whether {@link WireLine.bytes} are valid UTF-8. */
  readonly isUtf8: boolean;
  /** The JSON object the line holds, or `undefined` when it is not exactly one JSON object. */
  readonly message: JsonObject | undefined;
  /** The text of the object's top-level `id` member as written, or `undefined`. */
  readonly rawId: string | undefined;
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** Reads one line (its bytes without the `\n`), seen at `at` in `place`. */
export function readWireLine(bytes: Buffer, at: number, place: LinePlace): WireLine {
  let text: string;
  let isUtf8 = true;
  try {
    text = strictDecoder.decode(bytes);
  } catch {
    isUtf8 = false;
    text = bytes.toString('utf8');
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  let message: JsonObject | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (isJsonObject(value)) message = value;
  } catch {
    // Not JSON: `message` stays undefined, and the framing check reports the line.
  }
  return { ...place, at, bytes, text, isUtf8, message, rawId: message === undefined ? undefined : findRawId(text) };
}

/**
 * The key under which a request id is matched to its answer: a string by its value (however it is
 * escaped), a number by its exact text (`9007199254740993` is not `9007199254740992`, `1.5` is not
 * `1.50`), `null` as `null`.
 */
export function idKey(rawId: string): string {
  try {
    const value: unknown = JSON.parse(rawId);
    if (typeof value === 'string') return `s:${value}`;
    if (value === null) return 'null';
  } catch {
    // Not JSON text: compared as written.
  }
  return `n:${rawId.trim()}`;
}

/** Whether a received line is a response: an object with `result` or `error` and no `method`. */
export function isResponseLine(line: WireLine): boolean {
  const message = line.message;
  return message !== undefined && message.method === undefined && ('result' in message || 'error' in message);
}

/** The `error.code` of a response line, or `undefined`. */
export function errorCodeOf(line: WireLine): number | undefined {
  const error = line.message?.error;
  return isJsonObject(error) && typeof error.code === 'number' ? error.code : undefined;
}

/** A line for a report: at most `max` characters of its text. */
export function shortText(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
