/**
 * Reading JSON text without parsing it: where a string, a value or whitespace ends, for code that
 * finds a member in a message's text (and keeps the rest of its bytes as they are).
 *
 * @packageDocumentation
 * @internal
 */

/** Character codes of JSON's structural characters. @internal */
export const QUOTE = 0x22;
/** @internal */
export const BACKSLASH = 0x5c;
/** @internal */
export const OPEN_BRACE = 0x7b;
/** @internal */
export const CLOSE_BRACE = 0x7d;
/** @internal */
export const OPEN_BRACKET = 0x5b;
/** @internal */
export const CLOSE_BRACKET = 0x5d;
/** @internal */
export const COMMA = 0x2c;
/** @internal */
export const COLON = 0x3a;

/** The index of the first character at or after `i` that is not JSON whitespace. */
export function skipSpace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
  }
  return i;
}

/** The index just past the string starting at `i`, or -1. */
export function endOfString(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE) return -1;
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** The index just past the value starting at `i`, or -1. Nested values are skipped iteratively. */
export function endOfValue(text: string, i: number): number {
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

/**
 * The texts of the elements of the JSON array `text` (a line `JSON.parse` accepted as an array), in
 * order and byte for byte, or `undefined` when `text` is not a well-formed array.
 *
 * @remarks Elements are skipped without being parsed (see {@link endOfValue}): a batch's entries
 * keep their own bytes, such as the text of a numeric id that `JSON.stringify` would write otherwise.
 * @internal
 */
export function arrayElementTexts(text: string): string[] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACKET) return undefined;
  const elements: string[] = [];
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return elements;
  for (;;) {
    const end = endOfValue(text, i);
    if (end === -1) return undefined;
    elements.push(text.slice(i, end));
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACKET) return elements;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/** The end of a number, `true`, `false` or `null` token starting at `i`, or -1 if it is empty. */
export function endOfScalar(text: string, i: number): number {
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
  }
  return j === i ? -1 : j;
}

/**
 * The decimal text of a finite number, as `String(n)` writes it, but not through V8's
 * number-to-string cache.
 *
 * @remarks For a number converted once and never again, such as a stream's next cursor or a new
 * request id: the cache keeps each string it makes until thousands of later conversions have
 * replaced it, long enough for the collector to copy it through two young collections and move it
 * to the old generation, and a stream makes one such string per message.
 * @internal
 */
export function decimalText(n: number): string {
  // Whole numbers below a billion (every cursor and id of a stream, in practice): from a table of
  // three-digit texts, at most two joins of short strings, instead of a call into the serializer.
  if (n >= 0 && n < 1e9 && n === Math.floor(n)) {
    const table = (decimalTable ??= makeDecimalTable());
    if (n < 1000) return table.plain[n]!;
    const high = Math.floor(n / 1000);
    const low = table.padded[n - high * 1000]!;
    if (high < 1000) return table.plain[high]! + low;
    const top = Math.floor(high / 1000);
    return table.plain[top]! + table.padded[high - top * 1000]! + low;
  }
  return JSON.stringify(n);
}

/** The texts of 0 to 999, plain (`"7"`) and padded to three digits (`"007"`). */
interface DecimalTable {
  readonly plain: readonly string[];
  readonly padded: readonly string[];
}

let decimalTable: DecimalTable | undefined;

function makeDecimalTable(): DecimalTable {
  const plain = Array.from({ length: 1000 }, (_, i) => JSON.stringify(i));
  return { plain, padded: plain.map((text) => text.padStart(3, '0')) };
}
