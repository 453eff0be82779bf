/**
 * A first-in first-out queue of texts that allocates nothing once its size is steady.
 *
 * @packageDocumentation
 */

/**
 * Texts in the order pushed, taken from the front: a ring whose capacity (a power of two) doubles
 * when full and never shrinks, so that a queue whose size stays about the same (messages kept
 * until acknowledged) grows no new array for the collector to copy, as `splice` on an array does.
 *
 * @internal
 */
export class TextRing {
  #texts: string[] = new Array<string>(64).fill('');
  #start = 0;
  #length = 0;

  /** How many texts are held. */
  get length(): number {
    return this.#length;
  }

  /** Adds `text` at the back. */
  push(text: string): void {
    if (this.#length === this.#texts.length) {
      const texts = this.toArray();
      texts.length = this.#length * 2;
      this.#texts = texts.fill('', this.#length);
      this.#start = 0;
    }
    this.#texts[(this.#start + this.#length++) & (this.#texts.length - 1)] = text;
  }

  /** Lets go of the first `count` texts (all of them when `count` is larger). */
  dropFront(count: number): void {
    const dropped = Math.min(count, this.#length);
    const mask = this.#texts.length - 1;
    for (let i = 0; i < dropped; i++) this.#texts[(this.#start + i) & mask] = '';
    this.#start = (this.#start + dropped) & mask;
    this.#length -= dropped;
  }

  /** The texts held, front first, as a new array. */
  toArray(): string[] {
    const mask = this.#texts.length - 1;
    return Array.from({ length: this.#length }, (_, i) => this.#texts[(this.#start + i) & mask]!);
  }
}
