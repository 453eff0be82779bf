/**
 * An in-memory list of trace events, for a live viewer without a trace file.
 *
 * @packageDocumentation
 */
import type { TraceEvent } from './events';

/** Options of a {@link TraceStore}. */
export interface TraceStoreOptions {
  /** The most events kept; older ones are dropped first. Default 100,000. */
  maxEvents?: number;
}

/**
 * Keeps trace events in memory, numbered from 0 in arrival order.
 *
 * @remarks Past `maxEvents`, the oldest events are dropped; numbering does not restart, so a
 * reader that asks for events {@link TraceStore.since} its last count never sees one twice.
 * @example
 * ```ts
 * const store = new TraceStore();
 * new Conductor({ client, components, onTraceEvent: (event) => store.push(event) });
 * ```
 */
export class TraceStore {
  #events: TraceEvent[] = [];
  readonly #maxEvents: number;
  /** The number of `#events[0]`. */
  #base = 0;
  /** The index in `#events` of the oldest kept event (older ones are dropped, compacted lazily). */
  #first = 0;

  /** @throws RangeError if `maxEvents` is not a positive integer */
  constructor(options: TraceStoreOptions = {}) {
    const maxEvents = options.maxEvents ?? 100_000;
    if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new RangeError('maxEvents must be a positive integer');
    this.#maxEvents = maxEvents;
  }

  /** How many events were ever pushed (the number the next one gets). */
  get count(): number {
    return this.#base + this.#events.length;
  }

  /** Adds one event. */
  push(event: TraceEvent): void {
    this.#events.push(event);
    if (this.#events.length - this.#first > this.#maxEvents) this.#first++;
    // Compacting only once half the array is dropped keeps a push O(1) amortized.
    if (this.#first >= 1024 && this.#first * 2 >= this.#events.length) {
      this.#events = this.#events.slice(this.#first);
      this.#base += this.#first;
      this.#first = 0;
    }
  }

  /** The kept events numbered `from` and later, in order. */
  since(from = 0): TraceEvent[] {
    return this.#events.slice(Math.max(this.#first, from - this.#base));
  }
}
