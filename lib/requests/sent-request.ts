/**
 * The sending side of one request: {@link SentRequest}, {@link PreparedRequest} and
 * {@link RequestCancellationHandle}, sharing one once-only cancellation and settlement state.
 *
 * @packageDocumentation
 */
import { toDisposable, type Disposable } from '../support/disposable';
import { RequestAlreadySentError, RpcError, RequestTimeoutError, type ForwardingError, type RequestDetachedError } from '../jsonrpc/errors';
import type { RequestId } from '../jsonrpc/message';
import type { OutboundRequest } from './outbound-request';
import { inboundRequestOf, type Responder } from './responder';
import { scheduleSentRequestDrop } from './drop-scheduler';

/** Options of `Connection.sendRequest`. */
export interface SendRequestOptions {
  /** Aborting it cancels the request like {@link SentRequest.cancel}; already aborted: nothing is sent and the request rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds until the request is cancelled like {@link SentRequest.cancel}. */
  timeout?: number;
  /** Milliseconds to wait for the answer after a `timeout` cancel before rejecting with {@link RequestTimeoutError}. Default 1000. */
  timeoutGrace?: number;
}

/** The options of a request sent without any (shared: never written). @internal */
export const NO_SEND_OPTIONS: SendRequestOptions = Object.freeze({});

/** Validates {@link SendRequestOptions}. @throws TypeError or RangeError naming the option. @internal */
export function checkSendOptions(options: SendRequestOptions): void {
  if (options === NO_SEND_OPTIONS) return;
  const { signal, timeout, timeoutGrace } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  checkMilliseconds('timeout', timeout);
  checkMilliseconds('timeoutGrace', timeoutGrace);
}

function checkMilliseconds(name: string, value: unknown): void {
  if (value !== undefined && !(typeof value === 'number' && value >= 0 && Number.isFinite(value))) {
    throw new RangeError(`${name} must be a non-negative number of milliseconds`);
  }
}

/** Arms the `signal` and `timeout` options on a request that was just published. @internal */
export function armOptions(request: OutboundRequest, options: SendRequestOptions): void {
  if (options === NO_SEND_OPTIONS) return;
  const { signal, timeout } = options;
  if (signal) {
    const onAbort = (): void => void request.requestCancel();
    signal.addEventListener('abort', onAbort, { once: true });
    request.addCleanup(() => signal.removeEventListener('abort', onAbort));
  }
  if (timeout !== undefined) {
    const grace = options.timeoutGrace ?? 1000;
    let timer = setTimeout(() => {
      request.requestCancel();
      timer = setTimeout(() => request.giveUp(new RequestTimeoutError(request.method, timeout)), grace);
    }, timeout);
    request.addCleanup(() => clearTimeout(timer));
  }
}

/**
 * Cancels one request, independently of who consumes its answer.
 *
 * @remarks
 * Shares the once-only state of its request: whatever mix of handles, {@link SentRequest.cancel},
 * abort signals, timeouts, forwarded cancellation and drop-cancel asks, at most one
 * `$/cancel_request` is sent. Dropping a handle neither cancels nor disables drop-cancel.
 */
export class RequestCancellationHandle {
  readonly #request: OutboundRequest;

  /** @internal */
  constructor(request: OutboundRequest) {
    this.#request = request;
  }

  /**
   * Asks the peer to cancel the request.
   *
   * @returns `true` if this call enqueued the `$/cancel_request`; `false` if it did nothing (not
   * published yet — not remembered for later —, already cancelled, or settled). `true` does not
   * mean the peer stopped: the answer (data or `-32800`) still arrives as usual.
   * @throws An immediate failure to write the notification (the caller's to handle).
   */
  cancel(): boolean {
    return this.#request.requestCancel();
  }
}

/**
 * An outgoing request: await it for the result, or cancel, detach or forward it.
 *
 * @remarks
 * Awaiting resolves with the result, or rejects with an {@link RpcError} for an error answer, a
 * `ConnectionClosedError` if the connection closes first, or a {@link RequestTimeoutError}.
 * Dropping a SentRequest that was never awaited, forwarded or detached asks the peer to cancel it
 * (once the garbage collector notices). Use {@link SentRequest.detach} to let the request run.
 *
 * @typeParam R - the result type
 * @example
 * ```ts
 * const sent = connection.sendRequest('_test/sleep', { ms: 5000 });
 * setTimeout(() => sent.cancel(), 100);
 * await sent; // rejects with RpcError -32800 (or resolves, if the peer ignored the cancel)
 * ```
 */
export class SentRequest<R = unknown> implements PromiseLike<R> {
  readonly #request: OutboundRequest;

  /** @internal */
  constructor(request: OutboundRequest) {
    this.#request = request;
  }

  /**
   * The id on this connection, or `undefined` when the request was never sent: its `signal` was
   * already aborted, or its connection was already closed (awaiting it then rejects at once).
   */
  get id(): RequestId | undefined {
    return this.#request.id;
  }

  /** The method. */
  get method(): string {
    return this.#request.method;
  }

  /** Whether the answer has been routed or the request failed. */
  get isSettled(): boolean {
    return this.#request.isSettled;
  }

  /**
   * Like `Promise.prototype.then`; marks the request consumed (dropping it no longer cancels).
   *
   * @remarks After {@link SentRequest.detach} the promise rejects at once with
   * {@link RequestDetachedError}.
   */
  then<T1 = R, T2 = never>(
    onfulfilled?: ((value: R) => T1 | PromiseLike<T1>) | null,
    onrejected?: ((reason: unknown) => T2 | PromiseLike<T2>) | null,
  ): Promise<T1 | T2> {
    return this.#request.then(onfulfilled, onrejected) as Promise<T1 | T2>;
  }

  /** Like `Promise.prototype.catch`. */
  catch<T = never>(onrejected?: ((reason: unknown) => T | PromiseLike<T>) | null): Promise<R | T> {
    return this.then(undefined, onrejected);
  }

  /** Like `Promise.prototype.finally`. */
  finally(onfinally?: (() => void) | null): Promise<R> {
    return this.then().finally(onfinally);
  }

  /** Asks the peer to cancel; the answer is still delivered. Same contract as {@link RequestCancellationHandle.cancel}. */
  cancel(): boolean {
    return this.#request.requestCancel();
  }

  /**
   * Lets the request run on the peer and discards its answer: drop-cancel is off, and retained
   * handles still work while it is pending.
   *
   * @remarks
   * Awaiting a detached request rejects at once with {@link RequestDetachedError}, and so does an
   * await that was already waiting when `detach()` was called (nobody is left waiting for an answer
   * that will be thrown away). Called after the answer arrived, `detach()` discards it too. A
   * forwarded request (see {@link SentRequest.forwardResponseTo}) still answers upstream: only this
   * caller's copy is discarded. The request stays pending on the connection until the peer answers.
   */
  detach(): void {
    this.#request.detach();
  }

  /** A handle that can cancel this request later, wherever its answer goes. */
  cancellationHandle(): RequestCancellationHandle {
    return new RequestCancellationHandle(this.#request);
  }

  /**
   * Makes this request's answer (data or error) the answer of a request received from upstream.
   *
   * @remarks
   * The upstream responder counts as handed off (no automatic answer); an upstream cancel is
   * re-issued here at most once, with this connection's id; if this connection closes first,
   * upstream is answered `-32603` with data `{"reason":"incoming_transport_closed","method"}`, naming
   * the upstream request's method.
   * Awaiting this request as well still settles it with the same answer.
   * @throws AlreadyAnsweredError if the responder was already answered or handed off
   * @throws ForwardingError if this request's answer is already forwarded, or was discarded
   * (detached and already settled); the responder is then left as it was
   */
  forwardResponseTo(responder: Responder<never>): void {
    this.#request.forwardTo(inboundRequestOf(responder));
  }

  /**
   * Cancels this request when `source` is cancelled: a received request's responder (its peer
   * sent `$/cancel_request`) or an AbortSignal. For custom forwarding; the answer stays yours.
   *
   * @returns a disposable that stops listening (also done when the request settles)
   */
  forwardCancellationFrom(source: Responder<never> | AbortSignal): Disposable {
    const request = this.#request;
    let undo: () => void;
    if (source instanceof AbortSignal) {
      const onAbort = (): void => void request.requestCancel();
      if (source.aborted) onAbort();
      source.addEventListener('abort', onAbort, { once: true });
      undo = () => source.removeEventListener('abort', onAbort);
    } else {
      undo = inboundRequestOf(source).onCancel(() => request.requestCancel());
    }
    request.addCleanup(undo);
    return toDisposable(undo);
  }
}

/**
 * A request built but not sent yet: take a cancellation handle first, then {@link PreparedRequest.send}.
 *
 * @remarks A handle's `cancel()` before `send()` does nothing and is not remembered.
 */
export class PreparedRequest<R = unknown> {
  readonly #request: OutboundRequest;
  readonly #options: SendRequestOptions;

  /** @internal */
  constructor(request: OutboundRequest, options: SendRequestOptions) {
    this.#request = request;
    this.#options = options;
  }

  /** The method. */
  get method(): string {
    return this.#request.method;
  }

  /** A handle sharing this request's cancellation state. */
  cancellationHandle(): RequestCancellationHandle {
    return new RequestCancellationHandle(this.#request);
  }

  /**
   * Publishes the request.
   *
   * @throws RequestAlreadySentError if it was already sent (or failed to be sent: aborted signal,
   * closed connection); nothing is sent
   * @throws SerializationError if the params cannot be serialized (nothing is sent; `send()` may be
   * called again)
   */
  send(): SentRequest<R> {
    if (this.#request.state !== 'prepared') throw new RequestAlreadySentError(this.#request.method);
    return publishRequest<R>(this.#request, this.#options);
  }
}

/**
 * Publishes a request and returns its SentRequest, tracked for drop-cancel unless it is consumed
 * at once (see `scheduleSentRequestDrop`). @internal
 */
export function publishRequest<R>(request: OutboundRequest, options: SendRequestOptions): SentRequest<R> {
  const sent = new SentRequest<R>(request);
  const { signal } = options;
  if (signal?.aborted) {
    request.fail(toError(signal.reason), () => RpcError.requestCancelled().toJSON());
    return sent;
  }
  request.wire.publish(request);
  if (!request.isSettled) {
    scheduleSentRequestDrop(sent, request);
    armOptions(request, options);
  }
  return sent;
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
