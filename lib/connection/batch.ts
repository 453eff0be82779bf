/**
 * JSON-RPC 2.0 batches on the receiving side: a batch's entries dispatched one by one, its answers
 * collected and written as one array.
 *
 * @packageDocumentation
 */
import type { ErrorObject, JsonValue, RequestId } from '../jsonrpc/message';
import { responseLine } from '../framing/lines';
import type { InboundRequest, InboundWire } from '../requests/inbound-request';

/**
 * How many entries of a batch are dispatched in one turn of the event loop: a larger batch gives
 * other work (timers, other connections) a turn between slices, while the messages read after it
 * wait, so that arrival order still holds.
 *
 * @internal
 */
export const BATCH_SLICE_ENTRIES = 256;

/** What a {@link BatchAnswers} needs from its connection. @internal */
export interface BatchOwner {
  /** Whether the connection is closing or closed: nothing is written any more. */
  isClosing(): boolean;
  /** A member request was answered: it is no longer in flight. */
  settled(request: InboundRequest): void;
  /** Writes the batch's answer, one line. */
  write(text: string): void;
}

/**
 * The answers of one batch: one per request entry and per invalid entry, none for notifications,
 * written together as one JSON array once the last is in (in the order they came), or not at all
 * when there are none.
 *
 * @internal
 */
export class BatchAnswers {
  readonly #owner: BatchOwner;
  readonly #texts: string[] = [];
  #awaited = 0;
  #isSealed = false;
  /** The wire of the batch's requests: their answers come here instead of to the output. */
  readonly wire: InboundWire;

  constructor(owner: BatchOwner) {
    this.#owner = owner;
    this.wire = {
      isClosing: () => owner.isClosing(),
      finish: (request, result, error) => this.#finish(request, result, error),
    };
  }

  /** An entry that will be answered (a request about to be dispatched). */
  expect(): void {
    this.#awaited++;
  }

  /** Answers an entry at once (an invalid one). */
  refuse(id: RequestId, rawId: string | undefined, error: ErrorObject): void {
    this.#texts.push(responseLine(id, rawId, undefined, error));
    this.#flushIfDone();
  }

  /** Every entry has been dispatched: the array goes out once the awaited answers are in. */
  seal(): void {
    this.#isSealed = true;
    this.#flushIfDone();
  }

  #finish(request: InboundRequest, result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#owner.isClosing()) return;
    this.#owner.settled(request);
    this.#texts.push(responseLine(request.id, request.rawId, result, error));
    this.#awaited--;
    this.#flushIfDone();
  }

  #flushIfDone(): void {
    if (!this.#isSealed || this.#awaited > 0 || this.#texts.length === 0 || this.#owner.isClosing()) return;
    const texts = this.#texts.splice(0);
    this.#owner.write(`[${texts.join(',')}]`);
  }
}

/** Dispatches one entry of a batch. @internal */
export type BatchEntryDispatch = (value: unknown, text: string) => void;

/**
 * Dispatches a batch's entries in order, {@link BATCH_SLICE_ENTRIES} per turn of the event loop,
 * then calls `done`.
 *
 * @param holdInput - holds the connection's later messages; returns the release (called once the
 * last entry is dispatched, or the connection closed)
 * @internal
 */
export function dispatchBatch(
  values: readonly unknown[],
  texts: readonly string[],
  dispatch: BatchEntryDispatch,
  holdInput: () => () => void,
  isClosing: () => boolean,
  done: () => void,
): void {
  let next = 0;
  const slice = (): boolean => {
    const end = Math.min(values.length, next + BATCH_SLICE_ENTRIES);
    for (; next < end && !isClosing(); next++) dispatch(values[next], texts[next]!);
    return next === values.length || isClosing();
  };
  if (slice()) return done();
  const release = holdInput();
  const more = (): void => {
    if (!slice()) return void setImmediate(more);
    done();
    release();
  };
  setImmediate(more);
}
