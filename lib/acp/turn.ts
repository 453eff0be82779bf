/**
 * The client side of one prompt turn, the same in ACP v1 and v2: its updates, its cancellation, and
 * one promise for its end.
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import type { SentRequest } from '../requests/sent-request';
import type { AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import type { SessionUpdate, SessionUpdateParams, StopReason } from './types';

/** Options of `AcpClient.prompt()`. */
export interface PromptOptions {
  /** Aborting it cancels the turn: sends `session/cancel` (see {@link PromptTurn.cancel}). */
  signal?: AbortSignal;
  /**
   * Called with each update of the turn, in arrival order. A throw is reported on the
   * connection like any failed notification handler. With it, updates are kept for iteration only
   * once an iteration has started.
   */
  onUpdate?: (update: SessionUpdate, params: SessionUpdateParams) => void;
}

/** How a turn ended: its stop reason, whichever version carried it. */
export type TurnResult =
  | {
      /** ACP v1: the turn ended with the `session/prompt` answer. */
      readonly version: 1;
      /** The `stopReason` of the `session/prompt` answer. */
      readonly stopReason: StopReason;
      /** Always `undefined`: v1 gives the prompt no message id. */
      readonly messageId: undefined;
      /** The `session/prompt` result. */
      readonly response: V1.PromptResponse;
    }
  | {
      /** ACP v2: the turn ended with the session's idle `state_update`. */
      readonly version: 2;
      /** The idle update's `stopReason`; `end_turn` when it gave none. */
      readonly stopReason: StopReason;
      /** The inserted user message. */
      readonly messageId: string;
      /** The idle `state_update` that ended the turn. */
      readonly idle: Extract<
        V2.SessionUpdate,
        {
          /** Selects the `state_update` variant. */
          sessionUpdate: 'state_update';
        }
      >;
    };

/** What a turn needs from its client. @internal */
export interface TurnHost {
  /** Sends `session/cancel` for the turn's session. */
  cancelSession(sessionId: string): void;
  /** The turn has ended: stop routing updates to it. */
  ended(turn: PromptTurn): void;
}

type Waiter = { resolve(result: IteratorResult<SessionUpdate>): void; reject(error: unknown): void };

/**
 * One `session/prompt` turn: `await` it for its {@link TurnResult}, iterate it for its updates.
 *
 * @remarks
 * - The end of the turn is the `session/prompt` answer in ACP v1, and in v2 the first idle
 *   `state_update` of the session after the `{messageId}` answer (in wire order). An error answer
 *   (`-32800` for a prompt cancelled before insertion, `-32002`…) rejects the turn with that
 *   `RpcError`; a closed connection rejects it with `ConnectionClosedError`.
 * - Its updates are the session's `session/update`s from the moment the prompt was sent to the end
 *   of the turn (a v1 turn's end is its answer: later updates are not part of it).
 * - {@link PromptTurn.cancel} sends `session/cancel` (stops the turn: it ends `cancelled`);
 *   `turn.request.cancel()` sends `$/cancel_request` for the `session/prompt` request itself.
 *
 * @example
 * ```ts
 * const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hi' }] });
 * for await (const update of turn) console.log(update.sessionUpdate);
 * const { stopReason } = await turn;
 * ```
 */
export class PromptTurn implements PromiseLike<TurnResult>, AsyncIterable<SessionUpdate> {
  readonly #host: TurnHost;
  readonly #onUpdate: PromptOptions['onUpdate'];
  readonly #result: Promise<TurnResult>;
  #settle!: { resolve(result: TurnResult): void; reject(error: unknown): void };
  #version: AcpVersion | undefined;
  #messageId: string | undefined;
  #isAnswered = false;
  #endIdle: JsonObject | undefined;
  #isDone = false;
  #isCancelSent = false;
  #buffer: SessionUpdate[] | undefined;
  #failure: { error: unknown } | undefined;
  readonly #waiters: Waiter[] = [];

  /** @internal */
  constructor(
    host: TurnHost,
    /** The session the prompt was sent to. */
    readonly sessionId: string,
    /** The `session/prompt` request: cancel it (`$/cancel_request`), or read its raw answer. */
    readonly request: SentRequest<V1.PromptResponse | V2.PromptResponse>,
    version: AcpVersion | undefined,
    options: PromptOptions,
  ) {
    this.#host = host;
    this.#version = version;
    this.#onUpdate = options.onUpdate;
    if (!this.#onUpdate) this.#buffer = [];
    this.#result = new Promise<TurnResult>((resolve, reject) => (this.#settle = { resolve, reject }));
    // The end is always observed here, so an unawaited turn never rejects unhandled.
    this.#result.catch(noop);
    request.then(
      (result) => this.#answered(result),
      (error: unknown) => this.#fail(error),
    );
    const { signal } = options;
    if (signal) {
      if (signal.aborted) this.cancel();
      else {
        const onAbort = (): void => this.cancel();
        signal.addEventListener('abort', onAbort, { once: true });
        void this.#result.then(undefined, noop).finally(() => signal.removeEventListener('abort', onAbort));
      }
    }
  }

  /** The protocol version of the turn, once known. */
  get version(): AcpVersion | undefined {
    return this.#version;
  }

  /** The inserted user message's id (v2), once the agent answered; `undefined` in v1. */
  get messageId(): string | undefined {
    return this.#messageId;
  }

  /** Whether the turn has ended (or failed). */
  get isDone(): boolean {
    return this.#isDone;
  }

  /**
   * Cancels the turn: sends `session/cancel` for its session, once. The turn then ends with stop
   * reason `cancelled` (v1: the prompt's answer; v2: the idle update). Does nothing once it ended.
   *
   * @remarks `session/cancel` stops the session's running work, not only this turn's. Pending
   * `session/request_permission` requests of the session are answered `cancelled` by the client.
   */
  cancel(): void {
    if (this.#isDone || this.#isCancelSent) return;
    this.#isCancelSent = true;
    this.#host.cancelSession(this.sessionId);
  }

  /** Like `Promise.prototype.then`, on the turn's {@link TurnResult}. */
  then<T1 = TurnResult, T2 = never>(
    onfulfilled?: ((value: TurnResult) => T1 | PromiseLike<T1>) | null,
    onrejected?: ((reason: unknown) => T2 | PromiseLike<T2>) | null,
  ): Promise<T1 | T2> {
    return this.#result.then(onfulfilled, onrejected);
  }

  /**
   * The turn's updates, then the end of iteration when the turn ends; a failed turn throws its
   * error after the updates received before it.
   */
  [Symbol.asyncIterator](): AsyncIterator<SessionUpdate> {
    this.#buffer ??= [];
    return {
      next: () => this.#next(),
      return: async () => ({ done: true, value: undefined }),
    };
  }

  /** One `session/update` of the turn's session. @internal */
  accept(params: SessionUpdateParams): void {
    if (this.#isDone) return;
    const { update } = params;
    // v1: the answer ends the turn; what follows it on the wire is not part of it.
    if (this.#version === 1 && this.request.isSettled) return;
    if (this.#endIdle) return;
    this.#deliver(update, params);
    if (isIdle(update) && this.#version !== 1 && this.request.isSettled) {
      this.#endIdle = update as unknown as JsonObject;
      if (this.#isAnswered) this.#finishV2();
    }
  }

  /** The connection closed or the request failed. @internal */
  fail(error: unknown): void {
    this.#fail(error);
  }

  #deliver(update: SessionUpdate, params: SessionUpdateParams): void {
    this.#onUpdate?.(update, params);
    if (!this.#buffer) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve({ done: false, value: update });
    else this.#buffer.push(update);
  }

  #answered(result: V1.PromptResponse | V2.PromptResponse): void {
    if (this.#isDone) return;
    this.#isAnswered = true;
    const object = result as unknown as JsonObject;
    if (typeof object.stopReason === 'string' && this.#version !== 2) {
      this.#version = 1;
      return this.#finish({ version: 1, stopReason: object.stopReason, messageId: undefined, response: result as V1.PromptResponse });
    }
    this.#version = 2;
    this.#messageId = typeof object.messageId === 'string' ? object.messageId : undefined;
    if (this.#endIdle) this.#finishV2();
  }

  #finishV2(): void {
    const idle = this.#endIdle as unknown as Extract<V2.SessionUpdate, { sessionUpdate: 'state_update' }>;
    const stopReason = String((idle as unknown as JsonObject).stopReason ?? 'end_turn');
    this.#finish({ version: 2, stopReason, messageId: this.#messageId ?? '', idle });
  }

  #finish(result: TurnResult): void {
    this.#end();
    this.#settle.resolve(result);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve({ done: true, value: undefined });
  }

  #fail(error: unknown): void {
    if (this.#isDone) return;
    this.#end();
    this.#failure = { error };
    this.#settle.reject(error);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }

  #end(): void {
    this.#isDone = true;
    this.#host.ended(this);
  }

  #next(): Promise<IteratorResult<SessionUpdate>> {
    const update = this.#buffer?.shift();
    if (update !== undefined) return Promise.resolve({ done: false, value: update });
    if (this.#failure) return Promise.reject(this.#failure.error);
    if (this.#isDone) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }
}

function isIdle(update: SessionUpdate): boolean {
  const object = update as unknown as JsonObject;
  return object.sessionUpdate === 'state_update' && object.state === 'idle';
}

function noop(): void {}
