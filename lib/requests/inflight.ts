/**
 * The received requests a connection has not answered yet, by id — including several with the
 * same id.
 *
 * @packageDocumentation
 */
import type { ConnectionClosedError } from '../jsonrpc/errors';
import { IdTable } from './id-table';
import type { InboundRequest } from './inbound-request';
import type { RequestId } from '../jsonrpc/message';

/**
 * Received, unanswered requests by id.
 *
 * @remarks
 * JSON-RPC says ids should be unique among a peer's requests in flight, but nothing stops a peer
 * from sending id 7 again while its first request 7 still runs. Both run and are answered (each
 * with id 7); neither hides the other:
 * - a `$/cancel_request` for a duplicated id cancels **every** request in flight with that id (the
 *   sender cannot say which one it means, and cancellation is cooperative anyway);
 * - closing the connection abandons every one of them (their signals abort).
 *
 * The common case — one request per id — costs one table entry; only a duplicate makes an array.
 *
 * @internal
 */
export class InflightRequests {
  readonly #byId = new IdTable<InboundRequest | InboundRequest[]>();
  #size = 0;

  /** Requests in flight, duplicates included. */
  get size(): number {
    return this.#size;
  }

  /** A request whose handler is about to run. */
  add(request: InboundRequest): void {
    const existing = this.#byId.get(request.id);
    if (existing === undefined) this.#byId.set(request.id, request);
    else if (Array.isArray(existing)) existing.push(request);
    else this.#byId.set(request.id, [existing, request]);
    this.#size++;
  }

  /** The request was answered or abandoned; a request that is not in flight is ignored. */
  delete(request: InboundRequest): void {
    const existing = this.#byId.get(request.id);
    if (existing === request) {
      this.#byId.delete(request.id);
      this.#size--;
    } else if (Array.isArray(existing)) {
      const at = existing.indexOf(request);
      if (at === -1) return;
      existing.splice(at, 1);
      if (existing.length === 1) this.#byId.set(request.id, existing[0]!);
      this.#size--;
    }
  }

  /** The peer cancelled `id`: every request in flight with that id is marked cancelled. */
  markCancelledByPeer(id: RequestId): void {
    const existing = this.#byId.get(id);
    if (existing === undefined) return;
    if (!Array.isArray(existing)) return existing.markCancelledByPeer();
    // A copy: a cancel hook may answer a request, which removes it from the array.
    for (const request of [...existing]) request.markCancelledByPeer();
  }

  /** The connection closed: every request in flight is abandoned, and the table emptied. */
  abandonAll(reason: ConnectionClosedError): void {
    const all = this.#byId.values().flat();
    this.#byId.clear();
    this.#size = 0;
    for (const request of all) request.abandon(reason);
  }
}
