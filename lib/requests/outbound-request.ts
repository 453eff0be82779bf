/**
 * The sending side of one request as a state machine: publication, the once-only cancel, where the
 * answer goes (the awaiting caller, a forwarded upstream request, nowhere) and what a timeout, a
 * close or a detach does.
 *
 * @packageDocumentation
 */
import { ForwardingError, RequestDetachedError, RpcError, peerRpcError } from '../jsonrpc/errors';
import type { InboundRequest } from './inbound-request';
import type { ErrorObject, JsonValue, RequestId } from '../jsonrpc/message';
import { addWaiter, completeWaiters, waitForAnswer, type AnswerWaiters } from './answer-waiter';
import { unscheduleDrop, type DropCandidate } from './drop-scheduler';
import { deliverForwarded } from './unserializable';

/** What an {@link OutboundRequest} needs from its connection. @internal */
export interface OutboundWire {
  /** Allocates an id, registers the request as pending and writes it (or fails it if closed). */
  publish(request: OutboundRequest): void;
  /** Writes one `$/cancel_request` for `id`. */
  sendCancel(id: RequestId): void;
  /** Stops waiting for the answer to `id` (given up): a late answer is discarded. */
  giveUp(id: RequestId): void;
}

/** The wire error a forwarded upstream gets, given the upstream request's method. @internal */
export type ForwardedError = (upstreamMethod: string) => ErrorObject;

/**
 * Where an outgoing request is in its life. See {@link OutboundRequest} for the transitions.
 *
 * - `prepared`: built, not published: no id, nothing on the wire.
 * - `pending`: published; its answer will be kept for the caller.
 * - `detached`: published; its answer will be discarded (`detach()`).
 * - `settled`: the answer arrived, or the request failed locally (closed, aborted before it was
 *   sent, timed out): the outcome is kept for the caller.
 * - `discarded`: settled while detached, or detached once settled: no outcome is kept.
 *
 * @internal
 */
export type OutboundState = 'prepared' | 'pending' | 'detached' | 'settled' | 'discarded';

/** What a request that failed keeps: the error, and what a later forward answers with. */
interface Failure {
  readonly error: Error;
  readonly forwardedError: ForwardedError;
}

/**
 * The state of one outgoing request, shared by its SentRequest, PreparedRequest and handles.
 * Holds no reference to the SentRequest, so a dropped SentRequest can be observed.
 *
 * @remarks
 * One field, {@link OutboundRequest.state}, says where the request is (`—`: ignored):
 *
 * | state \ event | `markPublished()` | `settle()` (answer routed) | `fail()` (local failure) | `giveUp()` (timeout) | `detach()` | `then()` (await) | `forwardTo()` |
 * | --- | --- | --- | --- | --- | --- | --- | --- |
 * | prepared | pending | — | settled | — | — | — | — |
 * | pending | — | settled ¹ | settled ¹ | settled ¹ (RequestTimeoutError) | detached: awaiters reject now (RequestDetachedError) | waits | links upstream |
 * | detached | — | discarded ¹ | discarded ¹ | — | — | rejects (RequestDetachedError) | links upstream |
 * | settled | — | — | — | — | discarded (the outcome is dropped) | the outcome | upstream gets the outcome now |
 * | discarded | — | — | — | — | — | rejects (RequestDetachedError) | throws ForwardingError |
 *
 * ¹ runs the cleanups (timers, listeners), leaves the finalization registry, and hands the answer
 * to the linked upstream request, if any (a given-up request answers it `-32603`
 * `{"reason":"request_timeout"}`; a closed connection `{"reason":"incoming_transport_closed"}`).
 *
 * Two facts are orthogonal to the state and kept beside it:
 * - whether the one `$/cancel_request` was sent (`requestCancel()` sends it at most once, and only
 *   while `pending` or `detached`: the wire cancel is independent of where the answer goes);
 * - the upstream link of `forwardTo()` (`undefined`: never forwarded; a request: the answer goes
 *   there; `null`: delivered): forwarding adds a second receiver without changing what an awaiting
 *   caller gets, so it is not a state. A second `forwardTo()` throws {@link ForwardingError}.
 *
 * Dropping the SentRequest (`dropped()`) sends the cancel only while `pending`, not awaited and not
 * forwarded.
 *
 * @internal
 */
export class OutboundRequest implements DropCandidate {
  #id: RequestId | undefined;
  #params: unknown;
  #state: OutboundState = 'prepared';
  #isCancelSent = false;
  /** Its SentRequest is registered for finalization (see `scheduleSentRequestDrop`): unschedule when it ends. */
  #isRegistered = false;
  /** Once settled: the result (success), or `#failure`. Fields rather than an object per answer. */
  #result: JsonValue | undefined;
  #failure: Failure | undefined;
  /** The `then()` calls waiting for the answer (see `waitForAnswer`). */
  #waiters: AnswerWaiters;
  #cleanups: (() => void)[] | undefined;
  #upstream: InboundRequest | null | undefined;

  constructor(
    readonly method: string,
    params: unknown,
    readonly wire: OutboundWire,
  ) {
    this.#params = params;
  }

  /** The id on the connection, once published. */
  get id(): RequestId | undefined {
    return this.#id;
  }

  /** The params, until the request is published (then released: the line carries them). */
  get params(): unknown {
    return this.#params;
  }

  /** Where the request is. */
  get state(): OutboundState {
    return this.#state;
  }

  /** Settled or discarded: the answer arrived or the request failed. */
  get isSettled(): boolean {
    return this.#state === 'settled' || this.#state === 'discarded';
  }

  /** Called by the connection once the request has its id, is pending and its line is written. */
  markPublished(id: RequestId): void {
    this.#id = id;
    this.#params = undefined;
    this.#state = 'pending';
  }

  /** Sends `$/cancel_request` unless unpublished, settled or already sent. Returns whether it did. */
  requestCancel(): boolean {
    if ((this.#state !== 'pending' && this.#state !== 'detached') || this.#isCancelSent) return false;
    this.#isCancelSent = true;
    this.wire.sendCancel(this.#id!);
    return true;
  }

  /** Whether dropping the SentRequest would send a cancel: pending, not awaited, not forwarded, not cancelled. */
  get isDropCancellable(): boolean {
    return this.#state === 'pending' && this.#waiters === undefined && this.#upstream === undefined && !this.#isCancelSent;
  }

  /** The drop scheduler is registering this request's SentRequest: collecting it calls {@link OutboundRequest.dropped}. */
  markRegisteredForDrop(): void {
    this.#isRegistered = true;
  }

  /** The SentRequest was collected: cancel unless awaited, forwarded, detached or settled. */
  dropped(): void {
    if (this.#state === 'pending' && this.#waiters === undefined && this.#upstream === undefined) this.requestCancel();
  }

  /** A response arrived for this request. */
  settle(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#state !== 'pending' && this.#state !== 'detached') return;
    this.#end(
      result,
      error === undefined ? undefined : { error: peerRpcError(error.code, error.message, error.data), forwardedError: () => error },
    );
    this.#deliverUpstream(result, error);
  }

  /** The request failed locally (connection closed, or never sent). */
  fail(error: Error, forwardedError: ForwardedError): void {
    if (this.#state === 'prepared') {
      this.#state = 'settled';
      this.#failure = { error, forwardedError };
      return;
    }
    if (this.#state !== 'pending' && this.#state !== 'detached') return;
    this.#end(undefined, { error, forwardedError });
    const upstream = this.#upstream;
    if (upstream) this.#deliverUpstream(undefined, forwardedError(upstream.method));
  }

  /**
   * The caller stops waiting (a timeout): reject it now; the connection forgets the request (a later
   * answer is discarded), so nothing of it stays for an answer that may never come.
   */
  giveUp(error: Error): void {
    if (this.#state !== 'pending') return;
    this.wire.giveUp(this.#id!);
    const forwardedError: ForwardedError = (method) => RpcError.internalError({ reason: 'request_timeout', method }).toJSON();
    this.#end(undefined, { error, forwardedError });
    const upstream = this.#upstream;
    if (upstream) this.#deliverUpstream(undefined, forwardedError(upstream.method));
  }

  /** The caller discards the answer: awaiting rejects now with {@link RequestDetachedError}. */
  detach(): void {
    if (this.#state === 'pending') {
      this.#state = 'detached';
      const waiters = this.#waiters;
      this.#waiters = undefined;
      if (waiters) completeWaiters(waiters, false, new RequestDetachedError(this.method));
    } else if (this.#state === 'settled') {
      this.#state = 'discarded';
      this.#result = undefined;
      this.#failure = undefined;
    }
  }

  /**
   * `Promise.prototype.then` on the answer: no promise exists before it is called, so an
   * unconsumed error never goes unhandled.
   */
  then(onFulfilled: unknown, onRejected: unknown): Promise<unknown> {
    switch (this.#state) {
      case 'settled': {
        const settled = this.#failure === undefined ? Promise.resolve(this.#result) : Promise.reject(this.#failure.error);
        return settled.then(onFulfilled as never, onRejected as never);
      }
      case 'detached':
      case 'discarded':
        return Promise.reject(new RequestDetachedError(this.method)).then(onFulfilled as never, onRejected as never);
      default:
        return waitForAnswer(onFulfilled, onRejected, (waiter) => {
          this.#waiters = addWaiter(this.#waiters, waiter);
        });
    }
  }

  /**
   * Hands the answer to `upstream` (a received request); its cancellation is re-issued here.
   *
   * @throws ForwardingError, before handing anything off, when the answer is already forwarded or
   * was discarded
   * @throws AlreadyAnsweredError when `upstream` was already answered or handed off
   */
  forwardTo(upstream: InboundRequest): void {
    if (this.#upstream !== undefined) {
      throw new ForwardingError(this.method, `the answer of \`${this.method}\` is already forwarded to another request`);
    }
    if (this.#state === 'discarded') {
      throw new ForwardingError(this.method, `\`${this.method}\` was detached and its answer discarded: it cannot be forwarded`);
    }
    upstream.handOff();
    if (this.#state === 'settled') {
      this.#upstream = null;
      deliverForwarded(upstream, this.#result, this.#failure?.forwardedError(upstream.method));
      return;
    }
    this.#upstream = upstream;
    this.addCleanup(upstream.onCancel(() => this.requestCancel()));
  }

  /** Runs `fn` when the request settles, fails or is given up (at once if it has). */
  addCleanup(fn: () => void): void {
    if (this.#state === 'settled' || this.#state === 'discarded') fn();
    else (this.#cleanups ??= []).push(fn);
  }

  /** Leaves `pending` or `detached` with a result or a failure; completes an awaiting caller. */
  #end(result: JsonValue | undefined, failure: Failure | undefined): void {
    const wasDetached = this.#state === 'detached';
    this.#state = wasDetached ? 'discarded' : 'settled';
    // A drop can no longer cancel, so the registry may let go of this state now rather than after
    // the SentRequest is collected.
    if (this.#isRegistered) {
      this.#isRegistered = false;
      unscheduleDrop(this);
    }
    const cleanups = this.#cleanups;
    this.#cleanups = undefined;
    if (cleanups) for (const fn of cleanups) fn();
    if (wasDetached) return;
    this.#result = result;
    this.#failure = failure;
    const waiters = this.#waiters;
    if (!waiters) return;
    this.#waiters = undefined;
    if (failure === undefined) completeWaiters(waiters, true, result);
    else completeWaiters(waiters, false, failure.error);
  }

  /** The linked upstream request gets the answer (a forwarded request still settles for its caller). */
  #deliverUpstream(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    const upstream = this.#upstream;
    if (!upstream) return;
    this.#upstream = null;
    deliverForwarded(upstream, result, error);
  }
}
