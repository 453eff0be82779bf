/**
 * Stream cursors on the wire: where a resumable server puts each message's `_meta["acp/cursor"]`
 * and where a resuming client reads it, by splicing the message's text (its other bytes, ids
 * included, are kept as they are), and the control messages of a resumable WebSocket.
 *
 * @packageDocumentation
 */

/** The `_meta` key of a message's cursor on a resumable stream. */
export const CURSOR_META_KEY = 'acp/cursor';
/** The first frame of a WebSocket that resumes a connection: `{connectionId, cursor}` (cursor `null`: nothing received yet). */
export const STREAM_RESUME_METHOD = 'stream/resume';
/** The server's answer to a resume it can serve: `{received}`, how many client messages it has applied. */
export const STREAM_RESUMED_METHOD = 'stream/resumed';
/** The server's answer to a resume it cannot serve: `{reason}`; the socket then closes. */
export const STREAM_RESUME_FAILED_METHOD = 'stream/resume_failed';
/** The server's periodic acknowledgement on a resumable WebSocket: `{received}`. */
export const STREAM_ACK_METHOD = 'stream/ack';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** The index just after the string that starts (with its quote) at `at`. */
function skipString(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return text.length;
    let backslashes = 0;
    for (let j = quote - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** The index just after the JSON value that starts at `at`. */
function skipValue(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return skipString(text, at);
  let i = at;
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)) break;
    }
    return i;
  }
  let depth = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return i;
}

/**
 * The members of one JSON object's text, one at a time: where each key and value start, the
 * value's end found only when moving past it (a member a caller stops at is never scanned).
 * Allocates nothing per member.
 */
class MemberWalk {
  readonly #text: string;
  /** Where the current member's key starts (its quote) and ends (after its quote). */
  keyStart = 0;
  keyEnd = 0;
  /** Where the current member's value starts; -1 before the first member. */
  valueStart = -1;
  /** Whether the text stopped being a JSON object before its end. */
  isMalformed = false;

  /** @param at - where the object's `{` is (else the walk is malformed at once) */
  constructor(text: string, at: number) {
    this.#text = text;
    if (text.charCodeAt(at) !== OPEN_BRACE) this.isMalformed = true;
    else this.keyEnd = at + 1;
  }

  /** Moves to the next member; false at the object's end or where the text is malformed. */
  next(): boolean {
    if (this.isMalformed) return false;
    const text = this.#text;
    let i = skipSpace(text, this.valueStart === -1 ? this.keyEnd : skipValue(text, this.valueStart));
    if (this.valueStart !== -1 || text.charCodeAt(i) === CLOSE_BRACE) {
      if (text.charCodeAt(i) === CLOSE_BRACE) return false;
      if (text.charCodeAt(i) !== COMMA) return this.#fail();
      i = skipSpace(text, i + 1);
    }
    if (text.charCodeAt(i) !== QUOTE) return this.#fail();
    this.keyStart = i;
    this.keyEnd = skipString(text, i);
    i = skipSpace(text, this.keyEnd);
    if (text.charCodeAt(i) !== COLON) return this.#fail();
    this.valueStart = skipSpace(text, i + 1);
    return true;
  }

  /** Whether the current member's key is `key` (an escaped key is decoded first). */
  keyIs(key: string): boolean {
    const text = this.#text;
    const length = this.keyEnd - this.keyStart - 2;
    if (length === key.length && text.startsWith(key, this.keyStart + 1)) return true;
    const escape = text.indexOf('\\', this.keyStart + 1);
    return escape !== -1 && escape < this.keyEnd && JSON.parse(text.slice(this.keyStart, this.keyEnd)) === key;
  }

  /** Whether the current member's value is an object. */
  get isObject(): boolean {
    return this.#text.charCodeAt(this.valueStart) === OPEN_BRACE;
  }

  #fail(): false {
    this.isMalformed = true;
    return false;
  }
}

/** Where the value of the first member named `key` of the object at `at` starts, or -1. */
function valueOf(text: string, at: number, key: string): number {
  const walk = new MemberWalk(text, at);
  while (walk.next()) if (walk.keyIs(key)) return walk.valueStart;
  return -1;
}

/** Where the first member named `_meta` of the object at `at` whose value is an object starts, or -1. */
function metaOf(text: string, at: number): number {
  const walk = new MemberWalk(text, at);
  while (walk.next()) if (walk.isObject && walk.keyIs('_meta')) return walk.valueStart;
  return -1;
}

/** Inserts `member` (a `"key":value` text) first into the object whose `{` is at `at`. */
function insertFirst(text: string, at: number, member: string): string {
  const isEmpty = text.charCodeAt(skipSpace(text, at + 1)) === CLOSE_BRACE;
  return `${text.slice(0, at + 1)}${member}${isEmpty ? '' : ','}${text.slice(at + 1)}`;
}

/**
 * Stamps `cursor` on a message's text as `_meta["acp/cursor"]`: in `params._meta` when `params` is
 * an object (requests, notifications), else in `result._meta` when `result` is an object, else in
 * a `_meta` member of the message itself (an error answer, a non-object result). Any `_meta`
 * already there keeps its other members. Text that is not a JSON object is returned unchanged.
 *
 * @remarks One pass over the members before `params`/`result` and over that object's members
 * (the values of neither are scanned); the message's own members all only when it has neither.
 * @param cursor - a decimal integer
 * @internal
 */
export function stampCursor(line: string, cursor: string | number): string {
  const at = skipSpace(line, 0);
  const entry = `"${CURSOR_META_KEY}":"${cursor}"`;
  const walk = new MemberWalk(line, at);
  let topMeta = -1;
  while (walk.next()) {
    if (!walk.isObject) continue;
    if (walk.keyIs('params') || walk.keyIs('result')) {
      const meta = metaOf(line, walk.valueStart);
      if (meta !== -1) return insertFirst(line, meta, entry);
      return insertFirst(line, walk.valueStart, `"_meta":{${entry}}`);
    }
    if (walk.keyIs('_meta')) topMeta = walk.valueStart;
  }
  if (walk.isMalformed) return line;
  return topMeta === -1 ? insertFirst(line, at, `"_meta":{${entry}}`) : insertFirst(line, topMeta, entry);
}

/** Where the string value of the cursor {@link stampCursor} put on `text` starts (its quote), or -1. */
function cursorAt(text: string): number {
  // The stamp is the first member wherever it is, so this stops early on a stamped message.
  const walk = new MemberWalk(text, skipSpace(text, 0));
  let meta = -1;
  while (walk.next()) {
    if (!walk.isObject) continue;
    if (walk.keyIs('_meta')) {
      meta = walk.valueStart;
      break;
    }
    if (walk.keyIs('params') || walk.keyIs('result')) {
      meta = metaOf(text, walk.valueStart);
      break;
    }
  }
  if (meta === -1) return -1;
  const entry = valueOf(text, meta, CURSOR_META_KEY);
  return entry !== -1 && text.charCodeAt(entry) === QUOTE ? entry : -1;
}

/**
 * The cursor {@link stampCursor} put on a message's text, or `undefined` when it has none.
 *
 * @internal
 */
export function cursorOf(text: string): string | undefined {
  const at = cursorAt(text);
  if (at === -1) return undefined;
  const end = skipString(text, at);
  const raw = text.slice(at + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(at, end)) as string) : raw;
}

/**
 * The number of the cursor {@link stampCursor} put on a message's text, or `undefined` when it
 * has none or it is not a decimal integer (of at most 15 digits, without leading zeros).
 *
 * @internal
 */
export function cursorNumberOf(text: string): number | undefined {
  const at = cursorAt(text);
  if (at === -1) return undefined;
  let n = 0;
  let i = at + 1;
  for (; i < text.length && i <= at + 15; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) break;
    n = n * 10 + digit;
  }
  const digits = i - at - 1;
  if (digits === 0 || text.charCodeAt(i) !== QUOTE || (digits > 1 && text.charCodeAt(at + 1) === 0x30)) return undefined;
  return n;
}

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

/** The text of a control message. @internal */
export function controlMessage(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}
