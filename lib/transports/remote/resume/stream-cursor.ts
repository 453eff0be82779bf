/**
 * Stream cursors in a message's text: where a resumable server puts each message's
 * `_meta["acp/cursor"]`, by splicing the text (its other bytes, ids included, are kept as they
 * are), and where it is read back. A resuming client takes it out of a frame's bytes instead (see
 * `frame-cursor.ts`).
 *
 * @packageDocumentation
 */
import { CLOSE_BRACE, QUOTE, endOfString, decimalText, skipSpace } from '../../../framing/json-text';
import { MemberWalk, memberValue, metaOf } from './member-walk';

/** The `_meta` key of a message's cursor on a resumable stream. */
export const CURSOR_META_KEY = 'acp/cursor';
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
  const walk = new MemberWalk(line);
  for (let more = walk.first(at); more; more = walk.next()) {
    if (!walk.isObjectValue()) continue;
    if (walk.keyIs('params') || walk.keyIs('result')) {
      const holder = walk.valueStart;
      const meta = mayHoldMeta(line, holder) ? metaOf(line, holder) : -1;
      return meta === -1 ? insertFirst(line, holder, `"_meta":{${entry}}`) : insertFirst(line, meta, entry);
    }
    if (walk.keyIs('_meta')) topMeta = walk.valueStart;
  }
  if (walk.isMalformed) return line;
  return topMeta === -1 ? insertFirst(line, at, `"_meta":{${entry}}`) : insertFirst(line, topMeta, entry);
}

/**
 * Where the string value of the cursor {@link stampCursor} put on `text` starts (its quote), or -1.
 *
 * @internal
 */
export function cursorAt(text: string): number {
  // The stamp is the first member wherever it is, so this stops early on a stamped message.
  let meta = -1;
  const walk = new MemberWalk(text);
  for (let more = walk.first(skipSpace(text, 0)); more; more = walk.next()) {
    if (!walk.isObjectValue()) continue;
    if (walk.keyIs('_meta')) {
      meta = walk.valueStart;
      break;
    }
    if (walk.keyIs('params') || walk.keyIs('result')) {
      meta = metaOf(text, walk.valueStart);
      break;
    }
  }
  const entry = meta === -1 ? -1 : memberValue(text, meta, CURSOR_META_KEY);
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
