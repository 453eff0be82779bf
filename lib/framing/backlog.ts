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

  /** Characters of the held lines in all. */
  get bytes(): number {
    return this.#bytes;
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
  /** The input was paused (`true`, with the bytes held) or resumed (`false`). Optional. */
  inputHeld?(isHeld: boolean, heldBytes: number): void;
}

/**
 * Another connection's output that a flow's messages are forwarded to (see
 * {@link InputFlow.holdWhileFull}): a `Connection` fits.
 *
 * @internal
 */
export interface DrainSource {
  /** Whether its output cannot take more now. */
  readonly writableNeedDrain: boolean;
  /** Whether it has closed (it will never drain). */
  readonly isClosed: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  removeListener(event: 'drain' | 'close', listener: () => void): unknown;
}

/**
 * Decides, message by message, whether a connection dispatches what it read now or holds it.
 *
 * @remarks
 * While the output cannot take more, messages are held in a {@link Backlog}, in order, and
 * dispatched once it drains; past {@link BACKLOG_LIMIT_BYTES} held, the input is paused. The same
 * holds while the output of a relay (another connection this one's messages are forwarded to, see
 * {@link InputFlow.holdWhileFull}) needs drain. An input that ends while messages are held closes
 * the connection only once they have been dispatched.
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
  /** Outputs this flow's messages are forwarded to: dispatch also waits while one needs drain. */
  #relays: DrainSource[] = [];
  /** The relay whose `'drain'` (or `'close'`) this flow waits for, if any. */
  #awaitedRelay: DrainSource | undefined;
  /** The input ended: relays hold nothing back any more (nothing more will be read). */
  #isInputDone = false;
  /** Holds taken by {@link InputFlow.holdDispatch} and not yet released. */
  #dispatchHolds = 0;

  constructor(input: Readable, target: InputFlowTarget) {
    this.#input = input;
    this.#target = target;
  }

  /** Bytes (characters) of the messages held now. */
  get heldBytes(): number {
    return this.#backlog.bytes;
  }

  /** One decoded message: dispatched now, or held behind the ones already held. */
  accept(value: unknown, line: string): void {
    if (this.#backlog.isEmpty && this.#canDispatch()) return this.#target.dispatch(value, line);
    this.#backlog.push(value, line);
    if (this.#backlog.isOverLimit && !this.#isInputHeld) {
      this.#isInputHeld = true;
      this.#input.pause();
      this.#target.inputHeld?.(true, this.#backlog.bytes);
    }
  }

  /**
   * Holds dispatch (as for a full output of its own) while `relay`'s output needs drain: what this
   * flow dispatches is forwarded there, so memory stays bounded across the hop. Returns the undo.
   */
  holdWhileFull(relay: DrainSource): () => void {
    this.#relays.push(relay);
    return () => {
      const at = this.#relays.indexOf(relay);
      if (at !== -1) this.#relays.splice(at, 1);
      if (this.#awaitedRelay === relay) {
        this.#stopAwaiting();
        this.#release();
      }
    };
  }

  /**
   * Holds every later message until the returned function is called (once; later calls do
   * nothing): what the connection is dispatching now spans several turns of the event loop (a
   * large batch), and what was read after it must wait for it. The input ending does not lift it.
   */
  holdDispatch(): () => void {
    this.#dispatchHolds++;
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      if (--this.#dispatchHolds === 0) this.#release();
    };
  }

  /** The output became full (`true`) or drained (`false`). */
  setOutputFull(isFull: boolean): void {
    this.#isOutputFull = isFull;
    if (!isFull) this.#release();
  }

  /**
   * The input ended. Returns whether the connection may close now (nothing is held).
   *
   * @remarks Relays no longer hold anything back: nothing more will be read, so what is held is
   * dispatched now unless this connection's own output is full.
   */
  end(): boolean {
    this.#isInputDone = true;
    this.#stopAwaiting();
    while (!this.#isOutputFull && this.#dispatchHolds === 0 && !this.#target.isClosed()) {
      const held = this.#backlog.shift();
      if (!held) break;
      this.#target.dispatch(held.value, held.line);
    }
    if (this.#backlog.isEmpty && this.#dispatchHolds === 0) return true;
    this.#isEndHeld = true;
    return false;
  }

  /** Dispatches held messages in order until the output (or a relay's) is full again. */
  #release(): void {
    while (!this.#target.isClosed() && this.#canDispatch()) {
      const held = this.#backlog.shift();
      if (!held) break;
      this.#target.dispatch(held.value, held.line);
    }
    if (this.#target.isClosed()) return this.#stopAwaiting();
    if (this.#isInputHeld && !this.#backlog.isOverLimit) {
      this.#isInputHeld = false;
      this.#input.resume();
      this.#target.inputHeld?.(false, this.#backlog.bytes);
    }
    if (this.#isEndHeld && this.#backlog.isEmpty && this.#dispatchHolds === 0) {
      this.#isEndHeld = false;
      this.#target.inputEnded();
    }
  }

  /** Whether a message may be dispatched now; if a relay is full, waits for its drain. */
  #canDispatch(): boolean {
    if (this.#isOutputFull || this.#dispatchHolds > 0) return false;
    if (this.#awaitedRelay) return false;
    if (this.#isInputDone) return true;
    for (const relay of this.#relays) {
      if (relay.writableNeedDrain && !relay.isClosed) {
        this.#awaitedRelay = relay;
        relay.once('drain', this.#onRelayDrain);
        relay.once('close', this.#onRelayDrain);
        return false;
      }
    }
    return true;
  }

  readonly #onRelayDrain = (): void => {
    this.#stopAwaiting();
    this.#release();
  };

  #stopAwaiting(): void {
    const relay = this.#awaitedRelay;
    if (!relay) return;
    this.#awaitedRelay = undefined;
    relay.removeListener('drain', this.#onRelayDrain);
    relay.removeListener('close', this.#onRelayDrain);
  }
}
