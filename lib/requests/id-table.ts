/**
 * A table of values by request id that keeps its storage when it empties.
 *
 * @packageDocumentation
 */
import type { RequestId } from '../jsonrpc/message';

/** The entry that keeps the table from ever being empty; never a request id (ids are strings or numbers). */
const GUARD: unique symbol = Symbol('acp-wire id table guard');

/**
 * A `Map` from request id to value whose storage is not given back when its last entry is
 * deleted.
 *
 * @remarks
 * V8 shrinks a `Map`'s hash table on `delete()` when fewer than half its buckets are in use, so a
 * table that goes from one entry to none, as a connection's table of requests in flight does with
 * one request at a time, would allocate a new table on every delete. One guard entry, which no id
 * can equal, keeps the smallest table in place, so one request at a time never reallocates it.
 *
 * @internal
 */
export class IdTable<V> {
  readonly #map = new Map<RequestId | typeof GUARD, V | undefined>([[GUARD, undefined]]);

  /** Entries, the guard not counted. */
  get size(): number {
    return this.#map.size - 1;
  }

  get(id: RequestId): V | undefined {
    return this.#map.get(id);
  }

  set(id: RequestId, value: V): void {
    this.#map.set(id, value);
  }

  /** Removes `id`'s entry; returns whether there was one. */
  delete(id: RequestId): boolean {
    return this.#map.delete(id);
  }

  /** The values, in insertion order. */
  values(): V[] {
    const values: V[] = [];
    for (const [key, value] of this.#map) if (key !== GUARD) values.push(value as V);
    return values;
  }

  /** Removes every entry. */
  clear(): void {
    this.#map.clear();
    this.#map.set(GUARD, undefined);
  }
}
