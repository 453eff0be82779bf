/**
 * Answering one received request: {@link Responder} answers it once, exposes its cancellation,
 * and can be handed off to a forwarder. The request's state lives in `inbound-request.ts`.
 *
 * @packageDocumentation
 */
import { ErrorCode, RpcError, type AlreadyAnsweredError, type ConnectionClosedError } from '../jsonrpc/errors';
import type { InboundRequest } from './inbound-request';
import type { JsonValue, RequestId, ErrorObject } from '../jsonrpc/message';

/**
 * The key under which a Responder keeps its request for the library's other modules.
 *
 * @remarks
 * Why a symbol and not a `WeakMap`: a `WeakMap.set` per received request pays for ephemeron
 * bookkeeping on the hot path, while a symbol-keyed field is an ordinary property. The symbol is
 * not exported by the package: only acp-wire's own modules reach the request through it. (It is
 * not a secret: `Object.getOwnPropertySymbols` shows it. It is not an API either.)
 *
 * @internal
 */
export const INBOUND_REQUEST: unique symbol = Symbol('acp-wire.InboundRequest');

/**
 * Answers one received request, exactly once.
 *
 * @remarks
 * A request handler receives its Responder as the second argument. Answer with
 * {@link Responder.respond}, {@link Responder.respondWithError} or
 * {@link Responder.respondCancelled}, or return a value from the handler. A second answer throws
 * {@link AlreadyAnsweredError} and sends nothing.
 *
 * The request is always answered: if every reference to an unanswered Responder is dropped, the
 * library sends `-32800` (when the peer had cancelled) or `-32603` naming the method, once the
 * garbage collector notices (best-effort; see the README). `responder[Symbol.dispose]()` — or
 * `using` — says "dropped now" deterministically. Keeping the responder (in a timer, a queue,
 * another object, an abort listener) keeps the request open: nothing is sent automatically then.
 *
 * @typeParam R - the result type
 */
export class Responder<R = unknown> {
  readonly #request: InboundRequest;
  /** @internal The request, for acp-wire's own modules (see {@link INBOUND_REQUEST}). */
  readonly [INBOUND_REQUEST]: InboundRequest;

  /** @internal Created by the connection for each received request. */
  constructor(request: InboundRequest) {
    this.#request = request;
    this[INBOUND_REQUEST] = request;
  }

  /** The request's id, as the peer sent it. */
  get id(): RequestId {
    return this.#request.id;
  }

  /** The request's method. */
  get method(): string {
    return this.#request.method;
  }

  /** Whether the peer has cancelled this request with `$/cancel_request`. */
  get isCancelled(): boolean {
    return this.#request.isCancelled;
  }

  /** Whether an answer was sent or the answer was handed off to a forwarder. */
  get hasResponded(): boolean {
    return this.#request.isSettled;
  }

  /**
   * Aborts when the peer cancels the request (reason: an {@link RpcError} `-32800`) or the
   * connection closes first (reason: a {@link ConnectionClosedError}).
   *
   * @remarks The `-32800` reason is one frozen `RpcError` shared by every peer cancel (it says
   * why, not which request): to add details, wrap it (`new Error('…', { cause: signal.reason })`)
   * rather than set properties on it. An abort listener that captures the responder keeps it reachable: no automatic
   * answer is sent while such a listener is registered. Once the connection has closed, such a
   * responder keeps nothing of the connection alive.
   */
  get signal(): AbortSignal {
    return this.#request.signal;
  }

  /**
   * Answers with a result.
   *
   * @throws AlreadyAnsweredError if the request was already answered or handed off
   * @throws SerializationError if `result` cannot be serialized (nothing is sent; the request stays open)
   */
  respond(result: R): void {
    this.#request.answer(result === undefined ? null : (result as JsonValue), undefined);
  }

  /**
   * Answers with an error: an {@link RpcError} or a wire error object, sent as is.
   *
   * @throws AlreadyAnsweredError if the request was already answered or handed off
   */
  respondWithError(error: RpcError | ErrorObject): void {
    this.#request.answer(undefined, error instanceof RpcError ? error.toJSON() : error);
  }

  /**
   * Answers `-32800` "Request cancelled" (no data).
   *
   * @throws AlreadyAnsweredError if the request was already answered or handed off
   */
  respondCancelled(): void {
    this.#request.answer(undefined, { code: ErrorCode.RequestCancelled, message: 'Request cancelled' });
  }

  /**
   * Says "this responder is dropped now": if nothing was answered, the automatic answer goes out
   * (`-32800` if cancelled, else `-32603`) without waiting for a collection. Does nothing after an
   * answer or a hand-off.
   *
   * @remarks Called while the handler still runs (a `using` block inside it), the automatic
   * answer waits for the handler to finish: a value it returns or an error it throws is the answer
   * instead, as without `using`.
   */
  [Symbol.dispose](): void {
    this.#request.dispose();
  }
}

/**
 * The state behind a responder.
 *
 * @throws TypeError if `responder` is not a {@link Responder}
 * @internal
 */
export function inboundRequestOf(responder: Responder<never>): InboundRequest {
  if (!(responder instanceof Responder)) throw new TypeError('responder must be a Responder');
  return responder[INBOUND_REQUEST];
}
