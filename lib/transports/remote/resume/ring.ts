/**
 * A first-in first-out queue that allocates nothing once its size is steady.
 *
 * @packageDocumentation
 */

/**
 * Values in the order pushed, taken from the front: a ring whose capacity (a power of two) doubles
 * when full and never shrinks, so that a queue whose size stays about the same (messages kept
 * until acknowledged) grows no new array for the collector to copy, as `splice` on an array does.
 * A slot let go of holds `empty` (so that a dropped text is not kept alive).
 *
 * @internal
 */
export class Ring<T> {
  readonly #empty: T;
  #values: T[];
  #start = 0;
  #length = 0;

  /** @param empty - what a free slot holds */
  constructor(empty: T) {
    this.#empty = empty;
    this.#values = new Array<T>(64).fill(empty);
  }

  /** How many values are held. */
  get length(): number {
    return this.#length;
  }

  /** Adds `value` at the back. */
  push(value: T): void {
    if (this.#length === this.#values.length) {
      const values = this.toArray();
      values.length = this.#length * 2;
      this.#values = values.fill(this.#empty, this.#length);
      this.#start = 0;
    }
    this.#values[(this.#start + this.#length++) & (this.#values.length - 1)] = value;
  }

  /** The `index`-th value from the front (0: the oldest); `index` is below {@link Ring.length}. */
  at(index: number): T {
    return this.#values[(this.#start + index) & (this.#values.length - 1)]!;
  }

  /** Lets go of the first `count` values (all of them when `count` is larger). */
  dropFront(count: number): void {
    const dropped = Math.min(count, this.#length);
    const mask = this.#values.length - 1;
    for (let i = 0; i < dropped; i++) this.#values[(this.#start + i) & mask] = this.#empty;
    this.#start = (this.#start + dropped) & mask;
    this.#length -= dropped;
  }

  /** The values held, front first, as a new array. */
  toArray(): T[] {
    return Array.from({ length: this.#length }, (_, i) => this.at(i));
  }
}
