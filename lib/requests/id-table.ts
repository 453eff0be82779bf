/**
 * A table of values by request id that allocates nothing while it holds at most one entry.
 *
 * @packageDocumentation
 */
import type { RequestId } from '../jsonrpc/message';

/** The entry that keeps the `Map` from ever being empty; never a request id (ids are strings, numbers or `null`). */
const GUARD: unique symbol = Symbol('acp-wire id table guard');

/**
 * How many deletes a `Map` takes, beyond four per entry it holds (its guard included), before it
 * is replaced by a new one (see {@link IdTable}).
 */
const RENEW_AFTER_DELETES = 64;

/**
 * A map from request id to value, in insertion order, built for tables whose entries come and go
 * all the time (a connection's requests in flight).
 *
 * @remarks
 * Three things about V8's `Map` make such a table expensive, and this class avoids each:
 * - every `set` takes a fresh slot and every `delete` leaves a dead one, so the hash table is
 *   rebuilt (a new allocation) every few requests even when it holds one entry. One entry (one
 *   request at a time, the common case) is held in two fields, without a `Map`.
 * - a table that goes from one entry to none is shrunk, which allocates. The `Map` keeps a guard
 *   entry, which no id can equal, so it never empties.
 * - a rebuilt hash table is allocated in the old generation when the one it replaces is there.
 *   Once a busy table lives through two young collections (a quiet moment is enough), every
 *   rebuild after that is old-generation garbage that only a full collection reclaims. The `Map`
 *   is therefore replaced by a new one (young, sized to what it holds) after
 *   `4 × size + 64` deletes (the guard counted): a copy of its entries, a few instructions per delete.
 *
 * Ids are compared with `===` (for ids, strings, numbers or `null`, that is the `Map`'s
 * SameValueZero: no id is `NaN`).
 *
 * @internal
 */
export class IdTable<V> {
  /** The one entry held outside the `Map`, older than every entry in it; `undefined` when empty. */
  #soleId: RequestId | undefined = undefined;
  #soleValue: V | undefined = undefined;
  /** The other entries, after {@link GUARD}; made when a second entry first comes. */
  #map: Map<RequestId | typeof GUARD, V | undefined> | undefined;
  /** Deletes since {@link IdTable.#map} was made. */
  #deletes = 0;

  /** Entries. */
  get size(): number {
    return (this.#soleId === undefined ? 0 : 1) + (this.#map === undefined ? 0 : this.#map.size - 1);
  }

  get(id: RequestId): V | undefined {
    if (id === this.#soleId) return this.#soleValue;
    return this.#map?.get(id);
  }

  set(id: RequestId, value: V): void {
    if (id === this.#soleId) {
      this.#soleValue = value;
      return;
    }
    const map = this.#map;
    if (this.#soleId === undefined && (map === undefined || map.size === 1)) {
      this.#soleId = id;
      this.#soleValue = value;
      return;
    }
    if (map === undefined) this.#map = new Map<RequestId | typeof GUARD, V | undefined>([[GUARD, undefined]]).set(id, value);
    else map.set(id, value);
  }

  /** Removes `id`'s entry; returns whether there was one. */
  delete(id: RequestId): boolean {
    if (id === this.#soleId) {
      this.#soleId = undefined;
      this.#soleValue = undefined;
      return true;
    }
    const map = this.#map;
    if (map === undefined || !map.delete(id)) return false;
    if (++this.#deletes >= 4 * map.size + RENEW_AFTER_DELETES) this.#renew(map);
    return true;
  }

  /** The values, in insertion order. */
  values(): V[] {
    const values: V[] = [];
    if (this.#soleId !== undefined) values.push(this.#soleValue as V);
    if (this.#map !== undefined) for (const [key, value] of this.#map) if (key !== GUARD) values.push(value as V);
    return values;
  }

  /** Removes every entry. */
  clear(): void {
    this.#soleId = undefined;
    this.#soleValue = undefined;
    this.#map = undefined;
    this.#deletes = 0;
  }

  /** Replaces `map` by a new one with the same entries (see the class's remarks). */
  #renew(map: Map<RequestId | typeof GUARD, V | undefined>): void {
    this.#map = new Map(map);
    this.#deletes = 0;
  }
}
