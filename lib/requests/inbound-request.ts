/**
 * The receiving side of one request as a state machine: who answers it, when the automatic answer
 * goes out, and what a cancel or a close does.
 *
 * @packageDocumentation
 */
import { AlreadyAnsweredError, ErrorCode, RpcError, peerRpcError, type ConnectionClosedError } from '../jsonrpc/errors';
import { idleCollector } from '../gc/idle-collector';
import type { ErrorObject, JsonValue, RequestId } from '../jsonrpc/message';
import type { DropTarget } from '../gc/responder-tracker';
import { scheduleResponderDrop, unscheduleDrop } from './drop-scheduler';

/**
 * The reason every handler's signal aborts with when the peer cancels: one frozen `RpcError`
 * `-32800`, shared, since a peer's cancel has nothing of its own to say and an `Error` is costly to
 * build.
 */
const PEER_CANCELLED: RpcError = Object.freeze(peerRpcError(ErrorCode.RequestCancelled, 'Request cancelled'));

/** What an {@link InboundRequest} needs from its connection. @internal */
export interface InboundWire {
  /** Whether the connection is closing or closed: nothing is sent any more. */
  isClosing(): boolean;
  /** Sends the response and forgets the request. */
  finish(request: InboundRequest, result: JsonValue | undefined, error: ErrorObject | undefined): void;
}

/**
 * Told once, with whether the answer was an error, when a request enters `answered` (the ACP
 * `initialize` gate learns the outcome of an `initialize` this way).
 *
 * @internal
 */
export type AnswerObserver = (isError: boolean) => void;

/**
 * Where a received request is in its life. See {@link InboundRequest} for the transitions.
 *
 * - `running`: received; its handler (if any) is running, its responder is on the handler's stack.
 * - `running-disposed`: the responder was disposed while the handler runs.
 * - `awaiting-handler`: the handler returned a promise that has not settled yet.
 * - `awaiting-handler-disposed`: the same, and the responder was disposed meanwhile.
 * - `held`: the handler finished without answering: the responder's holder answers.
 * - `handed-off`: a forwarder owns the answer.
 * - `answered`: the answer was sent (or, once the connection closed, dropped). Final.
 * - `abandoned`: the connection closed before an answer; nothing will be sent.
 *
 * @internal
 */
export type InboundState =
  | 'running'
  | 'running-disposed'
  | 'awaiting-handler'
  | 'awaiting-handler-disposed'
  | 'held'
  | 'handed-off'
  | 'answered'
  | 'abandoned';

/**
 * The state of one received request. Holds no reference to its responder, so the responder can be
 * observed becoming unreachable.
 *
 * @remarks
 * One field, {@link InboundRequest.state}, says where the request is. Events (rows: state; `—`:
 * ignored; `throws`: {@link AlreadyAnsweredError}, nothing sent):
 *
 * | state \ event | `answer()` | `deliver()` | `handOff()` | `handlerReturnedPromise()` | `handlerFinished()` (no answer) | `dispose()` | `dropped()` (collected) | `abandon()` (close) |
 * | --- | --- | --- | --- | --- | --- | --- | --- | --- |
 * | running | answered | answered | handed-off | awaiting-handler ¹ | held ¹ ² | running-disposed | — | abandoned |
 * | running-disposed | answered | answered | handed-off | awaiting-handler-disposed ¹ | answered (automatic) | — | — | abandoned |
 * | awaiting-handler | answered ³ | answered ³ | handed-off ³ | — | held ² | awaiting-handler-disposed | answered (automatic) ³ | abandoned ³ |
 * | awaiting-handler-disposed | answered ³ | answered ³ | handed-off ³ | — | answered (automatic) ³ | — | answered (automatic) ³ | abandoned ³ |
 * | held | answered ³ ⁴ | answered ³ ⁴ | handed-off ³ ⁴ | — | — | answered (automatic) ³ ⁴ | answered (automatic) ³ ⁴ | abandoned ³ ⁴ |
 * | handed-off | throws | answered | throws | — | — | — | — | — (signal aborts) |
 * | answered | throws | — | throws | — | — | — | — | — |
 * | abandoned | answered (nothing sent) | answered (nothing sent) | handed-off | — | — | — | — | — |
 *
 * ¹ schedules the responder's registration for finalization (`scheduleResponderDrop`: at the end
 * of the turn). ² holds the idle collector open; entered while the connection is closing,
 * `abandoned` instead. ³ unschedules it, or leaves the finalization registry (`unscheduleDrop`).
 * ⁴ releases the idle collector. "Automatic" is `-32800` if the peer cancelled, else `-32603`
 * naming the method. Entering `answered` tells the {@link AnswerObserver} given to the
 * constructor, if any. `abandon()` also aborts the signal with the close error and runs the cancel
 * hooks (what was forwarded is cancelled).
 *
 * So the drop scheduler and the registry hold a request (and through it the connection) only in
 * `awaiting-handler*` and `held`, never after the request is answered, handed off or abandoned: a
 * closed connection is never kept alive by a responder that is reachable from its own signal.
 *
 * Orthogonal to the state, {@link InboundRequest.isCancelled} records that the peer sent
 * `$/cancel_request` ({@link InboundRequest.markCancelledByPeer}, once, in any state but
 * `answered`): the peer may cancel whoever owns the answer — the handler, the responder's holder
 * or a forwarder — and the cancel changes nobody's ownership, only the automatic answer's code.
 *
 * @internal
 */
export class InboundRequest implements DropTarget {
  #state: InboundState = 'running';
  #controller: AbortController | undefined;
  /** Why the signal aborted, kept so a signal first read after the abort is aborted too. */
  #abortReason: Error | undefined;
  #cancelHooks: (() => void)[] | undefined;
  #isCancelled = false;
  readonly #rawId: string | undefined;
  readonly #onAnswer: AnswerObserver | undefined;

  /**
   * @param rawId - the id's text as received, when `JSON.stringify` would write the parsed id
   * differently (see `rawIdText`)
   * @param onAnswer - told once whether the answer was an error, when the request enters `answered`
   */
  constructor(
    readonly id: RequestId,
    readonly method: string,
    readonly wire: InboundWire,
    rawId?: string,
    onAnswer?: AnswerObserver,
  ) {
    this.#rawId = rawId;
    this.#onAnswer = onAnswer;
  }

  /** Where the request is. */
  get state(): InboundState {
    return this.#state;
  }

  /** Whether the peer cancelled the request with `$/cancel_request` (orthogonal to the state). */
  get isCancelled(): boolean {
    return this.#isCancelled;
  }

  /** The id's text as received, when `JSON.stringify` would write the parsed id differently. */
  get rawId(): string | undefined {
    return this.#rawId;
  }

  /** Answered or handed off: the responder can no longer answer. */
  get isSettled(): boolean {
    return this.#state === 'answered' || this.#state === 'handed-off';
  }

  /** The handler's signal (created on first use). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** The responder answers. @throws AlreadyAnsweredError once answered or handed off. */
  answer(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.isSettled) throw new AlreadyAnsweredError(this.method);
    this.deliver(result, error);
  }

  /** The library answers (a handler's outcome, a forwarder, a refusal, the automatic answer). */
  deliver(result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#state === 'answered') return;
    this.wire.finish(this, result, error);
    this.#leave();
    this.#state = 'answered';
    this.#cancelHooks = undefined;
    this.#onAnswer?.(error !== undefined);
  }

  /** A forwarder takes the answer over. @throws AlreadyAnsweredError once answered or handed off. */
  handOff(): void {
    if (this.isSettled) throw new AlreadyAnsweredError(this.method);
    this.#leave();
    this.#state = 'handed-off';
  }

  /** The handler returned a pending promise: from now on `responder` may be dropped. */
  handlerReturnedPromise(responder: object): void {
    if (this.#state === 'running') this.#state = 'awaiting-handler';
    else if (this.#state === 'running-disposed') this.#state = 'awaiting-handler-disposed';
    else return;
    scheduleResponderDrop(responder, this);
  }

  /** The handler finished without answering (returned or resolved `undefined`). */
  handlerFinished(responder: object): void {
    switch (this.#state) {
      case 'running':
        if (this.wire.isClosing()) return this.abandon(undefined);
        scheduleResponderDrop(responder, this);
        this.#state = 'held';
        return idleCollector.holdOpen();
      case 'awaiting-handler':
        if (this.wire.isClosing()) return this.abandon(undefined);
        this.#state = 'held';
        return idleCollector.holdOpen();
      case 'running-disposed':
      case 'awaiting-handler-disposed':
        return this.#answerAutomatically();
    }
  }

  /** `responder[Symbol.dispose]()`: the automatic answer now, or once the running handler returns. */
  dispose(): void {
    if (this.#state === 'running') this.#state = 'running-disposed';
    else if (this.#state === 'awaiting-handler') this.#state = 'awaiting-handler-disposed';
    else if (this.#state === 'held') this.#answerAutomatically();
  }

  /** The responder was garbage-collected (only registered while `awaiting-handler*` or `held`). */
  dropped(): void {
    if (this.#state === 'awaiting-handler' || this.#state === 'awaiting-handler-disposed' || this.#state === 'held') {
      this.#answerAutomatically();
    }
  }

  /** The peer sent `$/cancel_request` for this request: abort the signal and run the hooks, once. */
  markCancelledByPeer(): void {
    if (this.#isCancelled || this.#state === 'answered') return;
    this.#isCancelled = true;
    this.#abort(PEER_CANCELLED);
    this.#runCancelHooks();
  }

  /** Runs `hook` when the peer cancels or the connection closes (at once if cancelled). Returns an undo function. */
  onCancel(hook: () => void): () => void {
    if (this.#isCancelled) {
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
   * The connection closed: abort the signal so the handler can stop, cancel what was forwarded on
   * its behalf (nobody is left to read the answer), and let go of the registry and the idle
   * collector; nothing will be sent.
   */
  abandon(reason: ConnectionClosedError | undefined): void {
    if (this.#state === 'answered' || this.#state === 'abandoned') return;
    if (this.#state !== 'handed-off') {
      this.#leave();
      this.#state = 'abandoned';
    }
    if (reason) this.#abort(reason);
    this.#runCancelHooks();
  }

  /** `-32800` if the peer cancelled, else `-32603` naming the method. */
  droppedError(): ErrorObject {
    return this.#isCancelled
      ? RpcError.requestCancelled().toJSON()
      : RpcError.internalError(`request handler dropped its responder for \`${this.method}\``).toJSON();
  }

  #answerAutomatically(): void {
    if (this.wire.isClosing()) return this.abandon(undefined);
    this.deliver(undefined, this.droppedError());
  }

  /** Leaves the current state: ends the registration and the collector's hold it implies. */
  #leave(): void {
    const state = this.#state;
    if (state === 'held') idleCollector.release();
    if (state === 'held' || state === 'awaiting-handler' || state === 'awaiting-handler-disposed') unscheduleDrop(this);
  }

  #abort(reason: Error): void {
    if (this.#abortReason) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  #runCancelHooks(): void {
    const hooks = this.#cancelHooks;
    this.#cancelHooks = undefined;
    if (hooks) for (const hook of hooks) hook();
  }
}

function noop(): void {}
