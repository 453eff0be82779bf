/**
 * The outgoing requests a connection waits for, and the bounded memory of those it gave up on.
 *
 * @packageDocumentation
 */
import { IdTable } from './id-table';
import type { RequestId } from '../jsonrpc/message';
import type { OutboundRequest } from './outbound-request';

/**
 * How many given-up ids a connection remembers so that their late answers pass silently. Past
 * this, the oldest is forgotten and its late answer, if it ever comes, is an unmatched response
 * (a `'warning'`).
 *
 * @internal
 */
export const GIVEN_UP_IDS_LIMIT = 4096;

/** What {@link PendingRequests.take} found for a response's id. @internal */
export type PendingMatch = OutboundRequest | 'given up' | undefined;

/**
 * Outgoing requests by id, until their answer arrives or the caller gives up on them.
 *
 * @remarks
 * A request given up after its timeout leaves the table at once: nothing of it (params, result,
 * callbacks) stays for an answer that may never come. Only its id is remembered, in a FIFO of at
 * most {@link GIVEN_UP_IDS_LIMIT} ids, so that the late answer of a recent one is discarded
 * without a warning.
 *
 * @internal
 */
export class PendingRequests {
  readonly #requests = new IdTable<OutboundRequest>();
  /** Insertion-ordered: the first id is the oldest. */
  readonly #givenUp = new Set<RequestId>();

  /** Requests waiting for an answer. */
  get size(): number {
    return this.#requests.size;
  }

  /** Waits for the answer to `request`, sent with `id`. */
  add(id: RequestId, request: OutboundRequest): void {
    this.#requests.set(id, request);
  }

  /** The request a response with `id` answers, removed from the table; or whether it was given up. */
  take(id: RequestId): PendingMatch {
    const request = this.#requests.get(id);
    if (request) {
      this.#requests.delete(id);
      return request;
    }
    return this.#givenUp.delete(id) ? 'given up' : undefined;
  }

  /** Stops waiting for the answer to `id`; remembers the id (bounded) to discard a late answer. */
  giveUp(id: RequestId): void {
    if (!this.#requests.delete(id)) return;
    this.#givenUp.add(id);
    if (this.#givenUp.size > GIVEN_UP_IDS_LIMIT) this.#givenUp.delete(this.#givenUp.values().next().value as RequestId);
  }

  /** Empties the table (the connection closed) and returns what was waiting. */
  drain(): OutboundRequest[] {
    const requests = this.#requests.values();
    this.#requests.clear();
    this.#givenUp.clear();
    return requests;
  }
}
