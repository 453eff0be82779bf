/**
 * The sending side of one request: {@link SentRequest}, {@link PreparedRequest} and
 * {@link RequestCancellationHandle}, sharing one once-only cancellation and settlement state.
 *
 * @packageDocumentation
 */
import { toDisposable, type Disposable } from './disposable';
import { RpcError, RequestTimeoutError } from './errors';
import type { ErrorObject, JsonValue, RequestId } from './message';
import { inboundRequestOf, type InboundRequest, type Responder } from './responder';
import { trackDrop, untrackDrop, type DropTarget } from './responder-tracker';

/** What an {@link OutboundRequest} needs from its connection. @internal */
export interface OutboundWire {
  /** Allocates an id, registers the request as pending and writes it (or fails it if closed). */
  publish(request: OutboundRequest): void;
  /** Writes one `$/cancel_request` for `id`. */
  sendCancel(id: RequestId): void;
}

const PREPARED = 0;
const PENDING = 1;
const SETTLED = 2;

interface Deferred {
  promise: Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The state of one outgoing request, shared by its SentRequest, PreparedRequest and handles.
 * Holds no reference to the SentRequest, so a dropped SentRequest can be observed.
 *
 * @internal
 */
export class OutboundRequest implements DropTarget {
  id: RequestId | undefined;
  #phase = PREPARED;
  #cancelSent = false;
  /** Awaited or forwarded: dropping the SentRequest no longer cancels. */
  isConsumed = false;
  /** The answer is discarded when it arrives; dropping no longer cancels. */
  isDetached = false;
  #hasOutcome = false;
  #result: JsonValue | undefined;
  #error: Error | undefined;
  #deferred: Deferred | undefined;
  #cleanups: (() => void)[] | undefined;
  #forwardTo: InboundRequest | undefined;
  #isForwarded = false;
  /** Builds the error a forwarded upstream gets: the peer's error, or a local failure's (closed, aborted, timed out). */
  #forwardError: ForwardedError | undefined;

  constructor(
    readonly method: string,
    readonly params: unknown,
    readonly wire: OutboundWire,
  ) {}

  get isPublished(): boolean {
    return this.#phase !== PREPARED;
  }

  get isSettled(): boolean {
    return this.#phase === SETTLED;
  }

  /** Called by the connection once the request has its id and is pending. */
  markPublished(id: RequestId): void {
    this.id = id;
    this.#phase = PENDING;
  }

  /** Sends `$/cancel_request` unless unpublished, settled or already sent. Returns whether it did. */
  cancel(): boolean {
    if (this.#phase !== PENDING || this.#cancelSent) return false;
    this.#cancelSent = true;
    this.wire.sendCancel(this.id!);
    return true;
  }

  /** The SentRequest was collected: cancel unless consumed, detached or settled. */
  dropped(): void {
    if (!this.isConsumed && !this.isDetached) this.cancel();
  }

  /** A response arrived for this request. */
  settle(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#phase === SETTLED) return;
    this.#phase = SETTLED;
    this.#cleanup();
    if (error !== undefined && !this.isDetached) this.#forwardError = () => error;
    // A forwarded request still settles for a caller that also awaits it.
    this.#forwardTo?.deliver(result, error);
    if (!this.isDetached) {
      this.#complete(result, error === undefined ? undefined : RpcError.fromJSON(error));
    }
  }

  /** The request failed locally (connection closed, or never sent). */
  fail(error: Error, forwardedError: ForwardedError): void {
    if (this.#phase === SETTLED) return;
    this.#phase = SETTLED;
    this.#cleanup();
    this.#forwardError = forwardedError;
    if (this.#forwardTo) this.#forwardTo.deliver(undefined, forwardedError(this.#forwardTo.method));
    if (!this.isDetached) this.#complete(undefined, error);
  }

  /** The caller stops waiting: reject it now; a later answer is discarded. */
  giveUp(error: Error): void {
    if (this.#phase === SETTLED || this.isDetached) return;
    const forwardTo = this.#forwardTo;
    this.isDetached = true;
    this.#forwardTo = undefined;
    this.#cleanup();
    this.#forwardError = (method) => RpcError.internalError({ reason: 'request_timeout', method }).toJSON();
    if (forwardTo) forwardTo.deliver(undefined, this.#forwardError(forwardTo.method));
    this.#complete(undefined, error);
  }

  /** The promise of the answer (created on first use, so an unconsumed error never goes unhandled). */
  promise(): Promise<unknown> {
    if (this.#hasOutcome) {
      return this.#error === undefined ? Promise.resolve(this.#result) : Promise.reject(this.#error);
    }
    if (!this.#deferred) {
      let resolve!: (value: unknown) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<unknown>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.#deferred = { promise, resolve, reject };
    }
    return this.#deferred.promise;
  }

  /**
   * Hands the answer to `upstream` (a received request); its cancellation is re-issued here.
   * Throws, before handing anything off, when the answer can never reach `upstream`.
   */
  forwardTo(upstream: InboundRequest): void {
    if (this.#isForwarded) throw new Error(`the answer of \`${this.method}\` is already forwarded to another request`);
    if (this.#phase === SETTLED && !this.#hasOutcome) {
      throw new Error(`\`${this.method}\` was detached and its answer discarded: it cannot be forwarded`);
    }
    upstream.handOff();
    this.isConsumed = true;
    this.#isForwarded = true;
    if (this.#hasOutcome) {
      upstream.deliver(this.#result, this.#forwardError?.(upstream.method));
      return;
    }
    this.#forwardTo = upstream;
    this.addCleanup(upstream.onCancel(() => this.cancel()));
  }

  /** Runs `fn` when the request settles, fails or is given up. */
  addCleanup(fn: () => void): void {
    if (this.#phase === SETTLED) fn();
    else (this.#cleanups ??= []).push(fn);
  }

  #cleanup(): void {
    // Settled or given up: a drop can no longer cancel, so the registry may let go of this state
    // (params, result) now rather than after the SentRequest is collected.
    untrackDrop(this);
    const cleanups = this.#cleanups;
    this.#cleanups = undefined;
    if (cleanups) for (const fn of cleanups) fn();
  }

  #complete(result: JsonValue | undefined, error: Error | undefined): void {
    this.#hasOutcome = true;
    this.#result = result;
    this.#error = error;
    const deferred = this.#deferred;
    this.#deferred = undefined;
    if (!deferred) return;
    if (error === undefined) deferred.resolve(result);
    else deferred.reject(error);
  }
}

/** The wire error a forwarded upstream gets, given the upstream request's method. @internal */
export type ForwardedError = (upstreamMethod: string) => ErrorObject;

/** Options of `Connection.sendRequest`. */
export interface SendRequestOptions {
  /** Aborting it cancels the request like {@link SentRequest.cancel}; already aborted: nothing is sent and the request rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds until the request is cancelled like {@link SentRequest.cancel}. */
  timeout?: number;
  /** Milliseconds to wait for the answer after a `timeout` cancel before rejecting with {@link RequestTimeoutError}. Default 1000. */
  timeoutGrace?: number;
}

/** Validates {@link SendRequestOptions}. @throws TypeError or RangeError naming the option. @internal */
export function checkSendOptions(options: SendRequestOptions): void {
  const { signal, timeout, timeoutGrace } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  for (const [name, value] of [['timeout', timeout], ['timeoutGrace', timeoutGrace]] as const) {
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && Number.isFinite(value))) {
      throw new RangeError(`${name} must be a non-negative number of milliseconds`);
    }
  }
}

/** Arms the `signal` and `timeout` options on a request that was just published. @internal */
export function armOptions(request: OutboundRequest, options: SendRequestOptions): void {
  const { signal, timeout } = options;
  if (signal) {
    const onAbort = (): void => void request.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    request.addCleanup(() => signal.removeEventListener('abort', onAbort));
  }
  if (timeout !== undefined) {
    const grace = options.timeoutGrace ?? 1000;
    let timer = setTimeout(() => {
      request.cancel();
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
    return this.#request.cancel();
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

  /** The id on this connection. */
  get id(): RequestId {
    return this.#request.id!;
  }

  /** The method. */
  get method(): string {
    return this.#request.method;
  }

  /** Whether the answer has been routed or the request failed. */
  get isSettled(): boolean {
    return this.#request.isSettled;
  }

  /** Like `Promise.prototype.then`; marks the request consumed (dropping it no longer cancels). */
  then<T1 = R, T2 = never>(
    onfulfilled?: ((value: R) => T1 | PromiseLike<T1>) | null,
    onrejected?: ((reason: unknown) => T2 | PromiseLike<T2>) | null,
  ): Promise<T1 | T2> {
    this.#request.isConsumed = true;
    return (this.#request.promise() as Promise<R>).then(onfulfilled, onrejected);
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
    return this.#request.cancel();
  }

  /**
   * Lets the request run on the peer and discards its answer: drop-cancel is off, retained handles
   * still work while it is pending, and awaiting it afterwards never settles.
   */
  detach(): void {
    this.#request.isDetached = true;
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
   * @throws Error if this request's answer is already forwarded, or was discarded (detached and
   * already settled); the responder is then left as it was
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
      const onAbort = (): void => void request.cancel();
      if (source.aborted) onAbort();
      source.addEventListener('abort', onAbort, { once: true });
      undo = () => source.removeEventListener('abort', onAbort);
    } else {
      undo = inboundRequestOf(source).onCancel(() => request.cancel());
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
   * @throws Error if it was already sent
   * @throws SerializationError if the params cannot be serialized (nothing is sent)
   */
  send(): SentRequest<R> {
    if (this.#request.isPublished) throw new Error(`\`${this.#request.method}\` was already sent`);
    return publishRequest<R>(this.#request, this.#options);
  }
}

/** Publishes a request and returns its tracked SentRequest. @internal */
export function publishRequest<R>(request: OutboundRequest, options: SendRequestOptions): SentRequest<R> {
  const sent = new SentRequest<R>(request);
  const { signal } = options;
  if (signal?.aborted) {
    request.fail(toError(signal.reason), () => RpcError.requestCancelled().toJSON());
    return sent;
  }
  request.wire.publish(request);
  if (!request.isSettled) {
    trackDrop(sent, request);
    armOptions(request, options);
  }
  return sent;
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
