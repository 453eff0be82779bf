/**
 * NDJSON lines as messages: one line parsed, and the predicates specs use to pick lines out of
 * interleaved traffic (a response to an id, a method, a cancel). Every predicate has the
 * {@link MessageMatch} shape that {@link LineReader} takes, and a name that says what it looks for
 * (shown when a bounded wait fails).
 */
import type { JsonObject, JsonValue } from '../../lib';

/** One line parsed: the JSON object it holds, or `{}` when the line is not a JSON object. */
export type WireMessage = JsonObject & { id?: JsonValue; method?: string; params?: JsonValue; result?: JsonValue; error?: JsonValue };

/** Says whether a line is the one looked for, from its parsed message and its exact text. */
export type MessageMatch = (message: WireMessage, line: string) => boolean;

/** Says whether a parsed message is the one looked for (usable wherever a {@link MessageMatch} is). */
export type MessagePredicate = (message: WireMessage) => boolean;

/** The exact cancelled error object on the wire. */
export const CANCELLED_ERROR = '{"code":-32800,"message":"Request cancelled"}';

/** Parses one line; a line that is not a JSON object gives `{}`. */
export function parseMessage(line: string): WireMessage {
  try {
    const value: unknown = JSON.parse(line);
    return (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as WireMessage;
  } catch {
    return {};
  }
}

/** Gives `match` a name that a failed wait can show. */
export function described<T extends MessageMatch>(description: string, match: T): T {
  return Object.defineProperty(match, 'name', { value: description });
}

/** A line whose exact text matches `pattern` (for streams that are not JSON, such as stderr). */
export function lineMatching(pattern: RegExp): MessageMatch {
  return described(`a line matching ${String(pattern)}`, (_: WireMessage, line: string) => pattern.test(line));
}

/** JSON value equality for ids (numbers by value, strings by text, types kept apart). */
export function sameId(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether `m` is a response (an id and no method). */
export function isResponse(m: WireMessage): boolean {
  return !('method' in m) && 'id' in m;
}

/** A response whose id is `id` (compared as JSON values). */
export function isResponseTo(id: unknown): MessagePredicate {
  return described(`a response to ${JSON.stringify(id)}`, (m: WireMessage) => isResponse(m) && sameId(m.id, id));
}

/** A request or notification with this method. */
export function hasMethod(method: string): MessagePredicate {
  return described(`a message with method ${method}`, (m: WireMessage) => m.method === method);
}

/** A `$/cancel_request` notification naming `requestId`, or naming any id when it is omitted. */
export function isCancelFor(requestId?: unknown): MessagePredicate {
  const what = requestId === undefined ? 'a $/cancel_request' : `a $/cancel_request for ${JSON.stringify(requestId)}`;
  return described(what, (m: WireMessage) => {
    if (m.method !== '$/cancel_request' || 'id' in m) return false;
    return requestId === undefined || sameId((m.params as JsonObject | undefined)?.requestId, requestId);
  });
}
