/**
 * The messages a connection has read but holds back while its output cannot drain.
 *
 * @packageDocumentation
 */
import type { Readable } from 'node:stream';

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

/** What an {@link InputFlow} drives. @internal */
export interface InputFlowTarget {
  /** Handles one message now. */
  dispatch(value: unknown, line: string): void;
  /** Whether the connection has closed: nothing more is dispatched. */
  isClosed(): boolean;
  /** The input ended earlier and the last held message has now been dispatched. */
  inputEnded(): void;
}

/**
 * Decides, message by message, whether a connection dispatches what it read now or holds it.
 *
 * @remarks
 * While the output cannot take more, messages are held in a {@link Backlog}, in order, and
 * dispatched once it drains; past {@link BACKLOG_LIMIT_BYTES} held, the input is paused. An input
 * that ends while messages are held closes the connection only once they have been dispatched.
 *
 * @internal
 */
export class InputFlow {
  readonly #input: Readable;
  readonly #target: InputFlowTarget;
  readonly #backlog = new Backlog();
  /** The output cannot take more now: read messages are held. */
  #isOutputFull = false;
  /** The input is paused because the backlog is over its limit. */
  #isInputHeld = false;
  /** The input ended while messages were held: report it once they are dispatched. */
  #isEndHeld = false;

  constructor(input: Readable, target: InputFlowTarget) {
    this.#input = input;
    this.#target = target;
  }

  /** One decoded message: dispatched now, or held behind the ones already held. */
  accept(value: unknown, line: string): void {
    if (!this.#isOutputFull && this.#backlog.isEmpty) return this.#target.dispatch(value, line);
    this.#backlog.push(value, line);
    if (this.#backlog.isOverLimit && !this.#isInputHeld) {
      this.#isInputHeld = true;
      this.#input.pause();
    }
  }

  /** The output became full (`true`) or drained (`false`). */
  setOutputFull(isFull: boolean): void {
    this.#isOutputFull = isFull;
    if (!isFull) this.#release();
  }

  /** The input ended. Returns whether the connection may close now (nothing is held). */
  end(): boolean {
    if (this.#backlog.isEmpty) return true;
    this.#isEndHeld = true;
    return false;
  }

  /** Dispatches held messages in order until the output is full again. */
  #release(): void {
    while (!this.#isOutputFull && !this.#target.isClosed()) {
      const held = this.#backlog.shift();
      if (!held) break;
      this.#target.dispatch(held.value, held.line);
    }
    if (this.#target.isClosed()) return;
    if (this.#isInputHeld && !this.#backlog.isOverLimit) {
      this.#isInputHeld = false;
      this.#input.resume();
    }
    if (this.#isEndHeld && this.#backlog.isEmpty) this.#target.inputEnded();
  }
}
