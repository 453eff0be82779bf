/**
 * A stream cursor taken out of a frame's bytes, in place: what a resuming client does to every
 * message it receives before its connection reads it, decoding nothing on the common shape.
 *
 * @packageDocumentation
 */
import { BACKSLASH, CLOSE_BRACE, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../../../framing/json-text';
import { CURSOR_META_KEY, cursorAt, cursorNumberOf } from './stream-cursor';

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
 * member before it is a scalar with a plain key; -1 otherwise. the text stamp's `holderOf`, over bytes.
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
 * Takes the cursor `stampCursor` put on a message out of its frame, in place, so that the
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
 * Takes the cursor `stampCursor` put on a message out of its frame wherever it is, `text`
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
