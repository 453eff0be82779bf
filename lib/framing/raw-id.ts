/**
 * Exact echo of numeric request ids whose text `JSON.stringify` would not write back as received
 * (integers beyond 2^53, fractions, `1e-400` that parses to `0`, `1.0`, `-0`): the id's text is
 * recovered from the received line and written back as is.
 *
 * @packageDocumentation
 */
import { isRequestId, type ErrorObject, type JsonValue } from '../jsonrpc/message';
import { CLOSE_BRACE, COLON, COMMA, OPEN_BRACE, QUOTE, endOfScalar, endOfString, endOfValue, skipSpace } from './json-text';
import { encodeJson } from './ndjson';

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
 * The text of a received request's numeric id when `JSON.stringify(id)` would write something
 * else, or `undefined` when the parsed id is written back exactly.
 *
 * @remarks
 * A number token reads back as a different text when it is beyond 2^53 (`9007199254740993`), a
 * fraction with trailing digits (`1.50`), an exponent (`1e21`, `1e-400` which parses to `0`),
 * a fraction that rounds to an integer (`1.0000000000000000001` is `1`), or `-0`. Returns the raw
 * token only when it is a number that reads back as `id`, so a response never carries anything but
 * the request's own id.
 *
 * Cost on the hot path (every request with a numeric id): when no member named `id` follows the
 * first occurrence of `"id"` and nothing in the line is escaped with `\u`, that occurrence is the
 * top-level member (a second one — in params, a duplicate key — would be another member named
 * `id`), and only its token is read; otherwise the line's top-level members are scanned
 * ({@link findRawId}).
 * @internal
 */
export function rawIdText(line: string, id: number): string | undefined {
  const raw = idToken(line);
  if (raw === undefined || isPlainSafeInteger(raw) || raw === String(id) || !/^-?\d/.test(raw)) return undefined;
  return Number(raw) === id ? raw : undefined;
}

/**
 * Whether `token` is an integer written as `JSON.stringify` writes it and small enough to read
 * back exactly: an optional `-`, at most 15 digits, no leading zero, not `-0`. Such a token is
 * `String(id)` of the id it parses to, so it needs no echo; checked without allocating (the usual
 * id of every request).
 */
function isPlainSafeInteger(token: string): boolean {
  const start = token.charCodeAt(0) === 0x2d ? 1 : 0;
  const digits = token.length - start;
  if (digits < 1 || digits > 15) return false;
  if (token.charCodeAt(start) === 0x30) return digits === 1 && start === 0;
  for (let i = start; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** The top-level `id` token of a line `JSON.parse` accepted (fast path described above). */
function idToken(line: string): string | undefined {
  const at = line.indexOf('"id"');
  if (at === -1 || hasIdMemberFrom(line, at + 1) || line.indexOf('\\u') !== -1) return findRawId(line);
  let i = skipSpace(line, at + 4);
  if (line.charCodeAt(i) !== COLON) return findRawId(line);
  i = skipSpace(line, i + 1);
  const end = endOfScalar(line, i);
  return end === -1 ? undefined : line.slice(i, end);
}

/** Lines shorter than this (small messages) are searched for `id"`, which stops less often. */
const SHORT_LINE_CHARS = 1024;
/** Lines at least this long are sampled before searching them for `"id"` (see {@link hasIdMemberFrom}). */
const LONG_LINE_CHARS = 64 * 1024;
/** How many characters of a long line are sampled for their density of quotes. */
const QUOTE_SAMPLE_CHARS = 4096;
/** More quotes than this in the sample: the line is searched with {@link ID_MEMBER}. */
const DENSE_QUOTES = 48;
/** A member named `id`: the name, optional JSON whitespace, the colon. */
const ID_MEMBER = /"id"[ \t\r\n]*:/g;

/**
 * Whether a member named `id` may start at or after `from` (`true` may be a false alarm, such as
 * `"pid"` in a short line: the caller then reads the line's structure exactly).
 *
 * @remarks `indexOf('"id"')` stops at every quote to compare the next three characters, which is
 * slow in the JSON of an object payload (a quote every few characters). Where quotes are that
 * dense, a regular expression that also wants the colon after the name skips ahead instead; where
 * they are sparse (a long string) `indexOf` is the faster. Both find every member named `id`.
 */
function hasIdMemberFrom(line: string, from: number): boolean {
  // A `"id"` at or after `from` has its `id"` at or after `from + 1`; searching from the `i`
  // stops at each `i` rather than at each quote, and in a request line `i` is usually the rarer.
  if (line.length < SHORT_LINE_CHARS) return line.indexOf('id"', from + 1) !== -1;
  if (line.length - from < LONG_LINE_CHARS || !hasDenseQuotes(line, from)) return line.indexOf('"id"', from) !== -1;
  ID_MEMBER.lastIndex = from;
  return ID_MEMBER.test(line);
}

function hasDenseQuotes(line: string, from: number): boolean {
  let quotes = 0;
  for (let i = from, end = from + QUOTE_SAMPLE_CHARS; i < end; i++) if (line.charCodeAt(i) === QUOTE) quotes++;
  return quotes > DENSE_QUOTES;
}

/**
 * The raw id of the request a line over the size limit starts, recovered from its first bytes, or
 * `undefined` when they do not show one.
 *
 * @remarks
 * Reads the top-level members the head holds completely. The line counts as a request only when a
 * `"method"` member and an `"id"` member (a string, a finite number or null) are both among them,
 * and no `"result"` or `"error"` member is: a response is never answered, a notification has no
 * id, and a member cut by the end of the head is not trusted (a number `12` may be the start of
 * `123`). Of duplicate `"id"` members the first wins (the rest of the line is never read).
 * @internal
 */
export function requestIdOfHead(head: string): string | undefined {
  let i = skipSpace(head, 0);
  if (head.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipSpace(head, i + 1);
  let id: string | undefined;
  let hasMethod = false;
  for (;;) {
    const keyEnd = endOfString(head, i);
    if (keyEnd === -1) break;
    const key = head.slice(i, keyEnd);
    i = skipSpace(head, keyEnd);
    if (head.charCodeAt(i) !== COLON) break;
    i = skipSpace(head, i + 1);
    const valueEnd = endOfValue(head, i);
    if (valueEnd === -1 || valueEnd >= head.length) break;
    if (key === '"result"' || key === '"error"') return undefined;
    if (key === '"method"') hasMethod = head.charCodeAt(i) === QUOTE;
    else if (id === undefined && isIdKey(key) && isIdToken(head.slice(i, valueEnd))) id = head.slice(i, valueEnd);
    i = skipSpace(head, valueEnd);
    if (head.charCodeAt(i) !== COMMA) break;
    i = skipSpace(head, i + 1);
  }
  return hasMethod ? id : undefined;
}

/** Whether `token` is the JSON text of a valid request id: a string, a finite number or null. */
function isIdToken(token: string): boolean {
  try {
    return isRequestId(JSON.parse(token));
  } catch {
    return false;
  }
}

/**
 * Serializes a response whose `id` is written as `rawId`, verbatim (JSON text, no newline).
 *
 * @throws SerializationError when the result or error cannot be serialized
 * @internal
 */
export function encodeResponseWithRawId(rawId: string, member: { result: JsonValue } | { error: ErrorObject }): string {
  // encodeJson(member) is `{"result":…}` or `{"error":…}`: keep all but its opening brace.
  return `{"jsonrpc":"2.0","id":${rawId},${encodeJson(member).slice(1)}`;
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
