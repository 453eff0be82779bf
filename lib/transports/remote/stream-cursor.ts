/**
 * Stream cursors on the wire: where a resumable server puts each message's `_meta["acp/cursor"]`
 * and where a resuming client reads it, by splicing the message's text (its other bytes, ids
 * included, are kept as they are), and the control messages of a resumable WebSocket.
 *
 * @packageDocumentation
 */

import {
  BACKSLASH,
  CLOSE_BRACE,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  endOfString,
  decimalText,
  endOfValue,
  skipSpace,
} from '../../framing/json-text';

/** The `_meta` key of a message's cursor on a resumable stream. */
export const CURSOR_META_KEY = 'acp/cursor';
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
  const end = endOfValue(text, valueStart);
  if (end === -1) return fail();
  const i = skipSpace(text, end);
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
 * Whether the text from `at` on may hold a `_meta` key: false when it has neither `_meta"` (a
 * quote inside a string is always escaped, so this finds every such key written plainly) nor a
 * `\u` escape (the only other way to write one). Spares walking the members of most messages.
 */
function mayHoldMeta(text: string, at: number): boolean {
  // `_meta"` rather than `"_meta"`: a search is quicker from a rare first character.
  return text.indexOf('_meta"', at) !== -1 || text.indexOf('\\u', at) !== -1;
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

/** {@link holderOf} found no plain `params`/`result` object: the general walk decides. */
const NO_HOLDER = -1;

/**
 * The shape of nearly every message up to its `params`/`result` object, as `JSON.stringify`
 * writes it: the version, then an integer or plain string `id` and/or a plain `method`. Sticky, and
 * matched with `test()` (its `lastIndex` is then the end of the match): no allocation.
 */
const COMMON_HEAD = /\{"jsonrpc":"2\.0",(?:"(?:id|method)":(?:"[^"\\]*"|-?\d+),){0,2}"(?:params|result)":\{/y;

/**
 * Where the `{` of the top-level `params` or `result` object starts when the message starts as
 * {@link COMMON_HEAD} (at `at`); {@link NO_HOLDER} otherwise (the general walk then decides).
 */
function holderOf(text: string, at: number): number {
  COMMON_HEAD.lastIndex = at;
  return COMMON_HEAD.test(text) ? COMMON_HEAD.lastIndex - 1 : NO_HOLDER;
}

/**
 * Inserts the cursor's `_meta` first into the `params`/`result` object whose `{` is at `holder`.
 *
 * @remarks One concatenation: V8 flattens it once, when the socket first writes it.
 */
function insertMeta(text: string, holder: number, cursor: string): string {
  const meta =
    text.charCodeAt(skipSpace(text, holder + 1)) === CLOSE_BRACE
      ? `"_meta":{"${CURSOR_META_KEY}":"${cursor}"}`
      : `"_meta":{"${CURSOR_META_KEY}":"${cursor}"},`;
  return text.slice(0, holder + 1) + meta + text.slice(holder + 1);
}

/**
 * Stamps `cursor` on a message's text as `_meta["acp/cursor"]`: in `params._meta` when `params` is
 * an object (requests, notifications), else in `result._meta` when `result` is an object, else in
 * a `_meta` member of the message itself (an error answer, a non-object result). Any `_meta`
 * already there keeps its other members. Text that is not a JSON object is returned unchanged.
 *
 * @remarks The common shape (scalar members, then `params`/`result` without a `_meta`) costs one
 * regular expression over the few members before that object and two native searches of the rest; any other
 * shape takes one pass over the members before `params`/`result` and over that object's members
 * (the values of neither are scanned), or over the message's own members when it has neither.
 * @param cursorValue - a decimal integer (a number is written without the number-to-string cache: see `decimalText`)
 * @internal
 */
export function stampCursor(line: string, cursorValue: string | number): string {
  const cursor = typeof cursorValue === 'number' ? decimalText(cursorValue) : cursorValue;
  const at = skipSpace(line, 0);
  const holder = holderOf(line, at);
  if (holder !== NO_HOLDER && !mayHoldMeta(line, holder)) return insertMeta(line, holder, cursor);
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
  const end = endOfString(text, at);
  if (end === -1) return undefined;
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

const SPACE = 0x20;

function isSpaceByte(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** `"params"` and `"result"`, the keys of a message's holder, as bytes. */
const PARAMS_KEY = Buffer.from('"params"');
const RESULT_KEY = Buffer.from('"result"');

/**
 * Whether the 9 bytes before `holder` (an object's `{`) are `"params":` or `"result":` written as
 * a key that starts right after a `,` or the message's own `{` (so its first quote is not escaped).
 */
function isHolderKeyBefore(frame: Buffer, holder: number): boolean {
  const before = frame[holder - 10];
  if (frame[holder - 1] !== COLON || (before !== COMMA && !(before === OPEN_BRACE && holder === 10))) return false;
  return bytesAt(frame, holder - 9, frame[holder - 8] === 0x70 /* p */ ? PARAMS_KEY : RESULT_KEY);
}

/**
 * Where the `{` of the top-level `params`/`result` object of a frame starts when it is the first
 * `{` after the message's own and the key before it is written plainly (see
 * {@link isHolderKeyBefore}): the shape `JSON.stringify` gives nearly every message; -1 for any
 * other frame.
 *
 * @remarks Sound for any valid JSON frame: that key's first quote follows a `,` or the message's
 * `{`, so it opens a string (a closing quote cannot be followed by a letter), the string is
 * `params`/`result` and, followed by `:`, a key; and with no `{` before it but the message's own,
 * the only object open there is the message. One native search finds the `{` (far cheaper than a
 * JavaScript loop over the bytes); only the key's bytes are read.
 */
function plainHolderOf(frame: Buffer): number {
  if (frame[0] !== OPEN_BRACE) return -1;
  const holder = frame.indexOf(OPEN_BRACE, 1);
  return holder >= 10 && isHolderKeyBefore(frame, holder) ? holder : -1;
}

/**
 * Where the `{` of the top-level `params` or `result` object of a frame starts, when every
 * member before it is a scalar with a plain key; -1 otherwise. {@link holderOf}, over bytes.
 */
function frameHolderOf(frame: Buffer): number {
  const plain = plainHolderOf(frame);
  if (plain !== -1) return plain;
  const end = frame.length;
  let i = 0;
  while (isSpaceByte(frame[i])) i++;
  if (frame[i] !== OPEN_BRACE) return -1;
  for (i++; i < end; i++) {
    while (isSpaceByte(frame[i])) i++;
    if (frame[i] !== QUOTE) return -1;
    const keyStart = ++i;
    while (i < end && frame[i] !== QUOTE) if (frame[i++] === BACKSLASH) return -1;
    const keyLength = i++ - keyStart;
    while (isSpaceByte(frame[i])) i++;
    if (frame[i++] !== COLON) return -1;
    while (isSpaceByte(frame[i])) i++;
    let c = frame[i];
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const isHolder = c === OPEN_BRACE && keyLength === 6 && (isKey(frame, keyStart, 'params') || isKey(frame, keyStart, 'result'));
      return isHolder ? i : -1;
    }
    if (c === QUOTE) {
      for (c = frame[++i]; c !== QUOTE; c = frame[++i]) if (c === BACKSLASH || i >= end) return -1;
      i++;
    } else {
      while (i < end && (c = frame[i]) !== COMMA && c !== CLOSE_BRACE && !isSpaceByte(c)) i++;
    }
    while (isSpaceByte(frame[i])) i++;
    if (frame[i] !== COMMA) return -1;
  }
  return -1;
}

function isKey(frame: Buffer, at: number, key: string): boolean {
  for (let k = 0; k < key.length; k++) if (frame[at + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** `"_meta":{`, what precedes a cursor entry in a `_meta` the stamp made. */
const META_OPEN = Buffer.from('"_meta":{');
/** `"acp/cursor":"`, the cursor entry up to its digits. */
const ENTRY_START = Buffer.from(`"${CURSOR_META_KEY}":"`);
/** `"_meta":{"acp/cursor":"`, the stamp's own `_meta` up to the cursor's digits. */
const STAMP_START = Buffer.concat([META_OPEN, ENTRY_START]);

function bytesAt(frame: Buffer, at: number, bytes: Buffer): boolean {
  // The length read once: a typed array's length is a getter.
  const length = bytes.length;
  if (at < 0 || frame.length < at + length) return false;
  for (let k = 0; k < length; k++) if (frame[at + k] !== bytes[k]) return false;
  return true;
}

/**
 * Reads the cursor entry that starts at `entry` (its key's quote) and turns it into spaces: the
 * whole `"_meta":{…}` (and the comma after it) when the stamp made it, else the entry and the comma
 * after it, else the entry alone (an agent's `_meta` then stays, empty). Returns the cursor's number, or -1 (nothing changed) when no cursor is written there.
 */
function blankEntry(frame: Buffer, entry: number): number {
  if (!bytesAt(frame, entry, ENTRY_START)) return -1;
  let i = entry + ENTRY_START.length;
  let n = 0;
  for (let c = frame[i]! - 0x30; c >= 0 && c <= 9 && i < entry + ENTRY_START.length + 15; c = frame[++i]! - 0x30) n = n * 10 + c;
  if (i === entry + ENTRY_START.length || frame[i] !== QUOTE) return -1;
  const end = i + 1;
  const meta = entry - META_OPEN.length;
  let from = entry;
  let to = end;
  // The stamp makes a `_meta` only as the first member of its object (an agent's empty `_meta`
  // there looks the same, and goes too: `{}` and no `_meta` mean the same).
  if (frame[end] === CLOSE_BRACE && bytesAt(frame, meta, META_OPEN) && frame[meta - 1] === OPEN_BRACE) {
    from = meta;
    to = frame[end + 1] === COMMA ? end + 2 : end + 1;
  } else if (frame[end] === COMMA) {
    to = end + 1;
  } else if (frame[end] !== CLOSE_BRACE) {
    return -1;
  }
  // A loop: `fill()` is a call into the runtime, dearer than these 30-odd bytes.
  for (let k = from; k < to; k++) frame[k] = SPACE;
  return n;
}

/**
 * What {@link takeCursor} took out of a frame: one per reader, reused for every frame (nothing is
 * allocated per message).
 *
 * @internal
 */
export class TakenCursor {
  /** The cursor's number; `undefined` when the frame has none. */
  cursor: number | undefined = undefined;
  /** Where the message starts in the frame now: the bytes before it are none of the message's. */
  start = 0;
}

/**
 * Takes the cursor {@link stampCursor} put on a message out of its frame, in place, so that the
 * frame from `taken.start` on parses as the agent sent it; `taken.cursor` is the cursor's number,
 * or `undefined` when the message has none (a cursor not written as the stamp writes it is read
 * and left in place).
 *
 * @remarks Nearly every message has the stamp's own `_meta` first in its `params`/`result`
 * object, the members before that object written plainly: the bytes before the stamp move up over
 * it (one native copy; the message then starts later in the frame), reading only the bytes of
 * that object's key and of the stamp and decoding nothing, which is what a resuming client does
 * on every message. Elsewhere (an agent's own `_meta`, an error answer, spaces) the entry's bytes
 * become spaces, found the slower way where needed (the frame's text walked: `text`, when the
 * caller has it already, else the frame decoded).
 * @internal
 */
export function takeCursor(frame: Buffer, taken: TakenCursor, text?: string): void {
  taken.start = 0;
  const holder = frameHolderOf(frame);
  if (holder !== -1 && bytesAt(frame, holder + 1, STAMP_START)) {
    const first = holder + 1 + STAMP_START.length;
    let i = first;
    let n = 0;
    for (let c = frame[i]! - 0x30; c >= 0 && c <= 9 && i < first + 15; c = frame[++i]! - 0x30) n = n * 10 + c;
    if (i > first && frame[i] === QUOTE && frame[i + 1] === CLOSE_BRACE) {
      const to = frame[i + 2] === COMMA ? i + 3 : i + 2;
      // The head (up to the holder's `{`) moves up to end where the stamp ended.
      frame.copyWithin(to - holder - 1, 0, holder + 1);
      taken.start = to - holder - 1;
      taken.cursor = n;
      return;
    }
  }
  const n = holder !== -1 && bytesAt(frame, holder + 1, META_OPEN) ? blankEntry(frame, holder + 1 + META_OPEN.length) : -1;
  taken.cursor = n !== -1 ? n : takeCursorFromText(frame, text ?? frame.toString('utf8'));
}

/**
 * Takes the cursor {@link stampCursor} put on a message out of its frame wherever it is, `text`
 * being the frame decoded: the slower way, for what the bytes alone do not show. Returns the
 * cursor's number, or `undefined` when the message has none; a cursor not written as the stamp
 * writes it is read and left in place.
 */
function takeCursorFromText(frame: Buffer, text: string): number | undefined {
  const n = cursorNumberOf(text);
  if (n === undefined) return undefined;
  const at = cursorAt(text) - (ENTRY_START.length - 1);
  if (at >= 0) blankEntry(frame, Buffer.byteLength(text.slice(0, at)));
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
