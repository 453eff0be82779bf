/**
 * A walk over the members of one JSON object's text, for the cursor code that splices messages
 * without parsing them.
 *
 * @packageDocumentation
 */
import { BACKSLASH, CLOSE_BRACE, COLON, COMMA, OPEN_BRACE, QUOTE, endOfValue, skipSpace } from '../../../framing/json-text';

/**
 * The walk over the members of one JSON object's text: where the current member's key and value
 * start, the value's end found only when moving past it (a member a caller stops at is never
 * scanned).
 *
 * @remarks One walk per object: a caller that walks an object inside the current one starts a
 * walk of its own. Nothing is decoded but an escaped key that is compared.
 * @internal
 */
export class MemberWalk {
  readonly #text: string;
  /** Where the current member's key starts (its quote) and ends (after its closing quote). */
  #keyStart = 0;
  #keyEnd = 0;
  /** Whether the current key holds an escape (then it is decoded to be compared). */
  #hasEscape = false;
  #valueStart = 0;
  #isMalformed = false;

  /** A walk over `text`, started by {@link MemberWalk.first}. */
  constructor(text: string) {
    this.#text = text;
  }

  /** Where the current member's value starts. */
  get valueStart(): number {
    return this.#valueStart;
  }

  /** Whether the walk stopped where the text is not a JSON object. */
  get isMalformed(): boolean {
    return this.#isMalformed;
  }

  /** Starts at the object whose `{` is at `at` and moves to its first member; false when it has none. */
  first(at: number): boolean {
    const text = this.#text;
    this.#isMalformed = text.charCodeAt(at) !== OPEN_BRACE;
    if (this.#isMalformed) return false;
    const i = skipSpace(text, at + 1);
    return text.charCodeAt(i) !== CLOSE_BRACE && this.#readMember(i);
  }

  /** Moves past the current member's value to the next member; false at the object's end. */
  next(): boolean {
    if (this.#isMalformed) return false;
    const text = this.#text;
    const end = endOfValue(text, this.#valueStart);
    if (end === -1) return this.#fail();
    const i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return false;
    if (c !== COMMA) return this.#fail();
    return this.#readMember(skipSpace(text, i + 1));
  }

  /** Whether the current member's key is `key` (an escaped key is decoded first). */
  keyIs(key: string): boolean {
    const text = this.#text;
    if (this.#hasEscape) {
      try {
        return JSON.parse(text.slice(this.#keyStart, this.#keyEnd)) === key;
      } catch {
        // An invalid escape: the text is no JSON object.
        return this.#fail();
      }
    }
    return this.#keyEnd - this.#keyStart - 2 === key.length && text.startsWith(key, this.#keyStart + 1);
  }

  /** Whether the current member's value is an object. */
  isObjectValue(): boolean {
    return this.#text.charCodeAt(this.#valueStart) === OPEN_BRACE;
  }

  /** Reads the member whose key starts at `at`. */
  #readMember(at: number): boolean {
    const text = this.#text;
    if (text.charCodeAt(at) !== QUOTE) return this.#fail();
    this.#keyStart = at;
    this.#hasEscape = false;
    let i = at + 1;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        this.#hasEscape = true;
        i++;
      }
    }
    this.#keyEnd = i + 1;
    i = skipSpace(text, this.#keyEnd);
    if (text.charCodeAt(i) !== COLON) return this.#fail();
    this.#valueStart = skipSpace(text, i + 1);
    return true;
  }

  #fail(): false {
    this.#isMalformed = true;
    return false;
  }
}

/** Where the value of the first member named `key` of the object at `at` of `text` starts, or -1. */
export function memberValue(text: string, at: number, key: string): number {
  const walk = new MemberWalk(text);
  for (let more = walk.first(at); more; more = walk.next()) if (walk.keyIs(key)) return walk.valueStart;
  return -1;
}

/** Where the first member named `_meta` of the object at `at` of `text` whose value is an object starts, or -1. */
export function metaOf(text: string, at: number): number {
  const walk = new MemberWalk(text);
  for (let more = walk.first(at); more; more = walk.next()) if (walk.isObjectValue() && walk.keyIs('_meta')) return walk.valueStart;
  return -1;
}
