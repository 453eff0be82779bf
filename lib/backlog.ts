/**
 * The messages a connection has read but holds back while its output cannot drain.
 *
 * @packageDocumentation
 */

/**
 * Size of the held lines past which a connection stops reading its input until it has dispatched
 * what it holds: 16 Mi characters (16 MiB of ASCII).
 *
 * @internal
 */
export const BACKLOG_LIMIT_BYTES = 16 * 1024 * 1024;

/** One decoded message and its line. @internal */
export interface HeldMessage {
  value: unknown;
  line: string;
}

/**
 * A first-in, first-out queue of decoded messages that counts the size of their lines.
 *
 * @remarks
 * A connection keeps reading while its output is full, so that a peer blocked on writing to it
 * can drain (two peers that both stopped reading would wait for each other forever), and holds
 * what it reads here, in arrival order, until its output drains. Past
 * {@link BACKLOG_LIMIT_BYTES} it stops reading: memory stays bounded.
 *
 * @internal
 */
export class Backlog {
  #items: HeldMessage[] = [];
  #head = 0;
  #bytes = 0;

  /** Whether nothing is held. */
  get isEmpty(): boolean {
    return this.#head === this.#items.length;
  }

  /** Whether the held lines are longer than {@link BACKLOG_LIMIT_BYTES} in all. */
  get isOverLimit(): boolean {
    return this.#bytes > BACKLOG_LIMIT_BYTES;
  }

  /** Holds one message at the end of the queue. */
  push(value: unknown, line: string): void {
    this.#items.push({ value, line });
    this.#bytes += line.length;
  }

  /** Takes the oldest message, or `undefined` when empty. */
  shift(): HeldMessage | undefined {
    if (this.isEmpty) return undefined;
    const item = this.#items[this.#head]!;
    this.#items[this.#head++] = undefined as unknown as HeldMessage;
    this.#bytes -= item.line.length;
    if (this.isEmpty) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      // Drop the consumed half so a queue that never empties does not grow without bound.
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
