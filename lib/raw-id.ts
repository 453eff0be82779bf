/**
 * Exact echo of request ids that a JavaScript number cannot hold (integers beyond 2^53,
 * fractions): the id's text is recovered from the received line and written back as is.
 *
 * @packageDocumentation
 */
import type { ErrorObject, JsonValue, RequestId } from './message';
import { encodeMessage } from './framing';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * Whether a parsed id may differ from the text the peer sent: a number that is not a safe integer.
 *
 * @remarks The one check on the hot path; ids that pass it need no scan.
 * @internal
 */
export function isInexactId(id: RequestId): id is number {
  return typeof id === 'number' && !Number.isSafeInteger(id);
}

/**
 * The raw text of the top-level `"id"` member of a JSON object, or `undefined` when there is none.
 *
 * @remarks
 * Meant for a line that `JSON.parse` accepted: nested values and strings are skipped without being
 * parsed, a key written with escapes (`"\u0069d"`) counts as `id`, and of duplicate members the
 * last one wins, as with `JSON.parse`. Text that is not a well-formed object yields `undefined`;
 * it never throws.
 * @internal
 */
export function findRawId(text: string): string | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  let found: string | undefined;
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return undefined;
  for (;;) {
    const keyEnd = endOfString(text, i);
    if (keyEnd === -1) return undefined;
    const key = text.slice(i, keyEnd);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = skipSpace(text, i + 1);
    const valueEnd = endOfValue(text, i);
    if (valueEnd === -1) return undefined;
    if (isIdKey(key)) found = text.slice(i, valueEnd);
    i = skipSpace(text, valueEnd);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return found;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/**
 * The exact text of a received request's id when its parsed value is inexact, else `undefined`.
 *
 * @remarks Returns the raw token only when it is a number that reads back as `id`, so a
 * response never carries anything but the request's own id.
 * @internal
 */
export function exactIdText(line: string, id: number): string | undefined {
  const raw = findRawId(line);
  if (raw === undefined || !/^-?\d/.test(raw)) return undefined;
  return Number(raw) === id ? raw : undefined;
}

/**
 * Serializes a response whose `id` is written as `rawId`, verbatim.
 *
 * @throws SerializationError when the result or error cannot be serialized
 * @internal
 */
export function encodeResponseWithRawId(
  rawId: string,
  member: { result: JsonValue } | { error: ErrorObject },
): string {
  // encodeMessage(member) is `{"result":…}\n` or `{"error":…}\n`: keep all but its opening brace.
  return `{"jsonrpc":"2.0","id":${rawId},${encodeMessage(member).slice(1)}`;
}

function isIdKey(key: string): boolean {
  if (key === '"id"') return true;
  if (!key.includes('\\')) return false;
  try {
    return JSON.parse(key) === 'id';
  } catch {
    return false;
  }
}

function skipSpace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
  }
  return i;
}

/** The index just past the string starting at `i`, or -1. */
function endOfString(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE) return -1;
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** The index just past the value starting at `i`, or -1. Nested values are skipped iteratively. */
function endOfValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return endOfString(text, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return endOfScalar(text, i);
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      const end = endOfString(text, j);
      if (end === -1) return -1;
      j = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
      return j + 1;
    }
  }
  return -1;
}

/** The end of a number, `true`, `false` or `null` token starting at `i`, or -1 if it is empty. */
function endOfScalar(text: string, i: number): number {
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
  }
  return j === i ? -1 : j;
}
