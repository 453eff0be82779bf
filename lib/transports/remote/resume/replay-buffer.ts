/**
 * The replay buffer of one resumable stream: the last messages sent, each with its cursor, held
 * for a reconnecting client, bounded by count and by age.
 *
 * @packageDocumentation
 */
import { Ring } from './ring';

/** Bounds of a {@link ReplayBuffer}. */
export interface ReplayBufferBounds {
  /** How many messages are held at most (the oldest go first). An integer of at least 1. */
  readonly maxMessages: number;
  /** How long a message is held at most, in milliseconds. */
  readonly maxAgeMs: number;
  /** How many bytes (UTF-16 code units) of text are held at most. Default 64 MiB. */
  readonly maxBytes?: number;
}

/** One held message. */
export interface ReplayEntry {
  /** Its cursor: a decimal integer, 1 for a stream's first message, one more for each next. */
  readonly cursor: string;
  /** Its text, cursor stamped. */
  readonly text: string;
}

/**
 * Numbers the messages of one stream (cursors `"1"`, `"2"`, …) and holds the latest ones.
 *
 * @remarks A message is dropped once more than `maxMessages` are held or once it is older than
 * `maxAgeMs` (checked on each append and each {@link ReplayBuffer.since}), and the oldest go
 * while the texts held are longer than `maxBytes`. Cursors are only
 * compared within one buffer. Holds no timer.
 * @internal
 */
export class ReplayBuffer {
  readonly #bounds: ReplayBufferBounds;
  readonly #now: () => number;
  /*
   * The held messages, oldest first, in rings (see `Ring`): once a stream's acknowledgements keep
   * the count steady, a message held allocates nothing, so the collector copies only the texts
   * themselves, never a freshly grown array. The three always hold the same messages.
   */
  readonly #texts = new Ring('');
  /** Each held text's length, so that dropping texts never reads them (long out of the processor's caches by then). */
  readonly #lengths = new Ring(0);
  readonly #times = new Ring(0);
  /** The cursor of the first entry held (the number of the next one when none is held). */
  #first = 1;
  #next = 1;
  #bytes = 0;

  /** @param now - the clock, in milliseconds (tests pass their own) */
  constructor(bounds: ReplayBufferBounds, now: () => number = Date.now) {
    this.#bounds = bounds;
    this.#now = now;
  }

  /** The cursor of the last message numbered, or `undefined` before the first. */
  get lastCursor(): string | undefined {
    return this.#next === 1 ? undefined : String(this.#next - 1);
  }

  /** How many messages are held now. */
  get size(): number {
    this.#expire();
    return this.#texts.length;
  }

  /** The number of the next message's cursor, without taking it. */
  get nextCursor(): number {
    return this.#next;
  }

  /** Holds `text` (already stamped with {@link ReplayBuffer.nextCursor}), whose cursor that was. */
  append(text: string): void {
    this.#next++;
    const now = this.#now();
    this.#texts.push(text);
    this.#lengths.push(text.length);
    this.#times.push(now);
    this.#bytes += text.length;
    if (this.#texts.length > this.#bounds.maxMessages) this.#drop(1);
    const maxBytes = this.#bounds.maxBytes ?? DEFAULT_MAX_BYTES;
    let over = 0;
    for (let bytes = this.#bytes; bytes > maxBytes; over++) bytes -= this.#lengths.at(over);
    if (over > 0) this.#drop(over);
    this.#expire(now);
  }

  /**
   * Every held message after `cursor`, oldest first; `undefined` when some message after it is no
   * longer held, or `cursor` is not one of this stream's (a gap would be silent otherwise).
   * `null` asks for everything from the stream's first message.
   */
  since(cursor: string | null): ReplayEntry[] | undefined {
    this.#expire();
    const after = cursor === null ? 0 : parseCursor(cursor);
    if (after === undefined || after >= this.#next) return undefined;
    if (after + 1 < this.#first) return undefined;
    const entries: ReplayEntry[] = [];
    for (let n = after + 1; n < this.#next; n++) entries.push({ cursor: String(n), text: this.#texts.at(n - this.#first) });
    return entries;
  }

  /**
   * Lets go of the messages up to `cursor` (included): the client has them. A cursor that is not
   * one of this stream's, or whose messages are gone already, changes nothing.
   */
  release(cursor: string): void {
    const through = parseCursor(cursor);
    if (through !== undefined) this.releaseThrough(through);
  }

  /** {@link ReplayBuffer.release} for a cursor's number. */
  releaseThrough(through: number): void {
    if (through >= this.#next || through < this.#first) return;
    this.#drop(through - this.#first + 1);
  }

  /** Drops the messages older than `maxAgeMs` at `now` (one clock reading per append). */
  #expire(now = this.#now()): void {
    const oldest = now - this.#bounds.maxAgeMs;
    let count = 0;
    while (count < this.#times.length && this.#times.at(count) < oldest) count++;
    if (count > 0) this.#drop(count);
  }

  #drop(count: number): void {
    for (let i = 0; i < count; i++) this.#bytes -= this.#lengths.at(i);
    // The texts are let go of now, not when their slots are next written.
    this.#texts.dropFront(count);
    this.#lengths.dropFront(count);
    this.#times.dropFront(count);
    this.#first += count;
  }
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** A cursor's number, or `undefined` when it is not a decimal integer of at least 0. */
function parseCursor(cursor: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,14})$/.test(cursor)) return undefined;
  return Number(cursor);
}
