/**
 * The receiving side of one request: {@link Responder} answers it once, exposes its cancellation,
 * and can be handed off to a forwarder.
 *
 * @packageDocumentation
 */
import { AlreadyAnsweredError, ErrorCode, RpcError, type ConnectionClosedError } from './errors';
import { unwatchDrop, watchDrop } from './idle-collector';
import type { ErrorObject, JsonValue, RequestId } from './message';
import { trackDrop, untrackDrop, type DropTarget } from './responder-tracker';

/** What an {@link InboundRequest} needs from its connection. @internal */
export interface InboundWire {
  /** Whether the connection is closing or closed: nothing is sent any more. */
  readonly isClosing: boolean;
  /** Sends the response and forgets the request. */
  finish(request: InboundRequest, result: JsonValue | undefined, error: ErrorObject | undefined): void;
}

const PENDING = 0;
const ANSWERED = 1;
const HANDED_OFF = 2;

/**
 * The state of one received request. Holds no reference to its {@link Responder}, so the responder
 * can be observed becoming unreachable.
 *
 * @internal
 */
export class InboundRequest implements DropTarget {
  #phase = PENDING;
  #controller: AbortController | undefined;
  /** Why the signal aborted, kept so a signal first read after the abort is aborted too. */
  #abortReason: Error | undefined;
  #cancelHooks: (() => void)[] | undefined;
  /** The peer cancelled the request with `$/cancel_request`. */
  isCancelled = false;
  #isWatched = false;
  #isTracked = false;
  /** The handler returned `undefined` (see {@link InboundRequest.watchForDrop}). */
  #handlerReturned = false;
  /** The responder was disposed while the handler still ran. */
  #isDisposed = false;
  /** Called once with whether the answer was an error, when the request is answered. */
  onAnswer: ((isError: boolean) => void) | undefined;
  /** The id's text as received, when its parsed number is inexact (beyond 2^53, a fraction). */
  rawId: string | undefined;

  constructor(
    readonly id: RequestId,
    readonly method: string,
    readonly wire: InboundWire,
  ) {}

  get isSettled(): boolean {
    return this.#phase !== PENDING;
  }

  get hasAnswered(): boolean {
    return this.#phase === ANSWERED;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** Answers once through the responder; a second answer or an answer after hand-off throws. */
  answer(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#phase !== PENDING) throw new AlreadyAnsweredError(this.method);
    this.deliver(result, error);
  }

  /** Answers on behalf of the owner of a handed-off request; ignored once answered. */
  deliver(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#phase === ANSWERED) return;
    this.wire.finish(this, result, error);
    this.#phase = ANSWERED;
    this.#unwatch();
    this.#untrack();
    this.#cancelHooks = undefined;
    this.onAnswer?.(error !== undefined);
  }

  /** Hands the answer over to a forwarder: no automatic answer will be sent. */
  handOff(): void {
    if (this.#phase !== PENDING) throw new AlreadyAnsweredError(this.method);
    this.#phase = HANDED_OFF;
    this.#unwatch();
    this.#untrack();
  }

  /**
   * Tracks `responder` (once, while unanswered) so that dropping it answers automatically.
   * Must be called with this request's own responder.
   */
  track(responder: object): void {
    if (this.#phase !== PENDING || this.#isTracked) return;
    this.#isTracked = true;
    trackDrop(responder, this);
  }

  /** Answered or handed off: a drop can no longer do anything, so the tracker may let go now. */
  #untrack(): void {
    if (!this.#isTracked) return;
    this.#isTracked = false;
    untrackDrop(this);
  }

  /**
   * The handler has returned without answering: from now on the responder may be dropped, so the
   * idle collector watches for it until the request is answered, handed off or abandoned. If the
   * responder was disposed while the handler ran, the automatic answer goes out now.
   */
  watchForDrop(): void {
    this.#handlerReturned = true;
    if (this.#isDisposed) return this.answerDropped();
    if (this.#phase !== PENDING || this.#isWatched || this.wire.isClosing) return;
    this.#isWatched = true;
    watchDrop();
  }

  #unwatch(): void {
    if (!this.#isWatched) return;
    this.#isWatched = false;
    unwatchDrop();
  }

  /** Marks the request cancelled by the peer (once), aborting its signal and running its hooks. */
  cancel(): void {
    if (this.isCancelled || this.#phase === ANSWERED) return;
    this.isCancelled = true;
    this.#abort(RpcError.requestCancelled());
    const hooks = this.#cancelHooks;
    this.#cancelHooks = undefined;
    if (hooks) for (const hook of hooks) hook();
  }

  /** Runs `hook` when the peer cancels (at once if it already has). Returns an undo function. */
  onCancel(hook: () => void): () => void {
    if (this.isCancelled) {
      hook();
      return noop;
    }
    (this.#cancelHooks ??= []).push(hook);
    return () => {
      const hooks = this.#cancelHooks;
      const at = hooks ? hooks.indexOf(hook) : -1;
      if (at !== -1) hooks!.splice(at, 1);
    };
  }

  /**
   * The connection closed: abort the signal so the handler can stop, and cancel what was forwarded
   * on its behalf (nobody is left to read the answer); nothing will be sent.
   */
  abandon(reason: ConnectionClosedError): void {
    this.#unwatch();
    this.#abort(reason);
    const hooks = this.#cancelHooks;
    this.#cancelHooks = undefined;
    if (hooks) for (const hook of hooks) hook();
  }

  #abort(reason: Error): void {
    if (this.#abortReason) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  /**
   * `responder[Symbol.dispose]()`: the automatic answer now, or — while the handler still runs —
   * once it returns, so that a handler leaving a `using` block with a value or an error answers
   * with it.
   */
  dispose(): void {
    if (this.#handlerReturned) return this.answerDropped();
    this.#isDisposed = true;
  }

  /** The automatic answer for a dropped responder, unless answered, handed off or closing. */
  answerDropped(): void {
    this.#unwatch();
    if (this.#phase !== PENDING || this.wire.isClosing) return;
    this.deliver(undefined, this.droppedError());
  }

  /** The responder was garbage-collected. */
  dropped(): void {
    this.answerDropped();
  }

  /** `-32800` if the peer cancelled, else `-32603` naming the method. */
  droppedError(): ErrorObject {
    return this.isCancelled
      ? RpcError.requestCancelled().toJSON()
      : RpcError.internalError(`request handler dropped its responder for \`${this.method}\``).toJSON();
  }
}

function noop(): void {}

let requestOf: (responder: Responder<never>) => InboundRequest;

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

  static {
    requestOf = (responder) => responder.#request;
  }

  /** @internal Created by the connection for each received request. */
  constructor(request: InboundRequest) {
    this.#request = request;
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
   * @remarks An abort listener that captures the responder keeps it reachable: no automatic
   * answer is sent while such a listener is registered.
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

/** The state behind a responder. @internal */
export function inboundRequestOf(responder: Responder<never>): InboundRequest {
  return requestOf(responder);
}
