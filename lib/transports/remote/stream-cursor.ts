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

/*
 * The walk over the members of one JSON object's text: where the current member's key and value
 * start, the value's end found only when moving past it (a member a caller stops at is never
 * scanned). Module state rather than an object, so that a walk allocates nothing: walks are
 * synchronous, and a caller that starts a walk inside another never goes back to the outer one.
 */
let walkText = '';
/** Where the current member's key starts (its quote) and ends (after its closing quote). */
let keyStart = 0;
let keyEnd = 0;
/** Whether the current key holds an escape (then it is decoded to be compared). */
let hasEscape = false;
/** Where the current member's value starts. */
let valueStart = 0;
/** Whether the walk stopped where the text is not a JSON object. */
let isMalformed = false;

/** Starts a walk at the object whose `{` is at `at` and moves to its first member; false when it has none. */
function firstMember(text: string, at: number): boolean {
  walkText = text;
  isMalformed = text.charCodeAt(at) !== OPEN_BRACE;
  if (isMalformed) return false;
  const i = skipSpace(text, at + 1);
  return text.charCodeAt(i) !== CLOSE_BRACE && readMember(i);
}

/** Moves past the current member's value to the next member; false at the object's end. */
function nextMember(): boolean {
  if (isMalformed) return false;
  const text = walkText;
  const i = skipSpace(text, skipValue(text, valueStart));
  const c = text.charCodeAt(i);
  if (c === CLOSE_BRACE) return false;
  if (c !== COMMA) return fail();
  return readMember(skipSpace(text, i + 1));
}

/** Reads the member whose key starts at `at`. */
function readMember(at: number): boolean {
  const text = walkText;
  if (text.charCodeAt(at) !== QUOTE) return fail();
  keyStart = at;
  hasEscape = false;
  let i = at + 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) break;
    if (c === BACKSLASH) {
      hasEscape = true;
      i++;
    }
  }
  keyEnd = i + 1;
  i = skipSpace(text, keyEnd);
  if (text.charCodeAt(i) !== COLON) return fail();
  valueStart = skipSpace(text, i + 1);
  return true;
}

function fail(): false {
  isMalformed = true;
  return false;
}

/** Whether the current member's key is `key` (an escaped key is decoded first). */
function keyIs(key: string): boolean {
  if (hasEscape) {
    try {
      return JSON.parse(walkText.slice(keyStart, keyEnd)) === key;
    } catch {
      // An invalid escape: the text is no JSON object.
      return fail();
    }
  }
  return keyEnd - keyStart - 2 === key.length && walkText.startsWith(key, keyStart + 1);
}

/** Whether the current member's value is an object. */
function isObjectValue(): boolean {
  return walkText.charCodeAt(valueStart) === OPEN_BRACE;
}

/** Where the value of the first member named `key` of the object at `at` starts, or -1. */
function memberValue(text: string, at: number, key: string): number {
  for (let more = firstMember(text, at); more; more = nextMember()) if (keyIs(key)) return valueStart;
  return -1;
}

/** Where the first member named `_meta` of the object at `at` whose value is an object starts, or -1. */
function metaOf(text: string, at: number): number {
  for (let more = firstMember(text, at); more; more = nextMember()) if (isObjectValue() && keyIs('_meta')) return valueStart;
  return -1;
}

/**
 * Whether the text from `at` on may hold a `_meta` key: false when it has neither `"_meta"` (a
 * quote inside a string is always escaped, so this finds every such key written plainly) nor a
 * `\u` escape (the only other way to write one). Spares walking the members of most messages.
 */
function mayHoldMeta(text: string, at: number): boolean {
  return text.indexOf('"_meta"', at) !== -1 || text.indexOf('\\u', at) !== -1;
}

/**
 * Inserts `member` (a `"key":value` text) first into the object whose `{` is at `at`.
 *
 * @remarks Joined into one flat string: a concatenation would be a tree of slices of `text`,
 * which the replay buffer would hold (with `text`) and every write would have to flatten.
 */
function insertFirst(text: string, at: number, member: string): string {
  const isEmpty = text.charCodeAt(skipSpace(text, at + 1)) === CLOSE_BRACE;
  return [text.slice(0, at + 1), member, isEmpty ? '' : ',', text.slice(at + 1)].join('');
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
  let topMeta = -1;
  for (let more = firstMember(line, at); more; more = nextMember()) {
    if (!isObjectValue()) continue;
    if (keyIs('params') || keyIs('result')) {
      const holder = valueStart;
      const meta = mayHoldMeta(line, holder) ? metaOf(line, holder) : -1;
      walkText = '';
      return meta === -1 ? insertFirst(line, holder, `"_meta":{${entry}}`) : insertFirst(line, meta, entry);
    }
    if (keyIs('_meta')) topMeta = valueStart;
  }
  walkText = '';
  if (isMalformed) return line;
  return topMeta === -1 ? insertFirst(line, at, `"_meta":{${entry}}`) : insertFirst(line, topMeta, entry);
}

/** Where the string value of the cursor {@link stampCursor} put on `text` starts (its quote), or -1. */
function cursorAt(text: string): number {
  // The stamp is the first member wherever it is, so this stops early on a stamped message.
  let meta = -1;
  for (let more = firstMember(text, skipSpace(text, 0)); more; more = nextMember()) {
    if (!isObjectValue()) continue;
    if (keyIs('_meta')) {
      meta = valueStart;
      break;
    }
    if (keyIs('params') || keyIs('result')) {
      meta = metaOf(text, valueStart);
      break;
    }
  }
  const entry = meta === -1 ? -1 : memberValue(text, meta, CURSOR_META_KEY);
  walkText = '';
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
