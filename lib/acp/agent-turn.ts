/**
 * The agent side of a prompt turn: the {@link AgentTurn} a handler works with, and the per-session
 * queue that maps turns to ACP v1 (the `session/prompt` answer ends the turn) or v2 (`state_update`
 * running/idle).
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../connection/connection';
import { RpcError, describeThrown } from '../jsonrpc/errors';
import type { ErrorObject, JsonObject } from '../jsonrpc/message';
import { SESSION_UPDATE_METHOD } from './methods';
import type { AcpVersion } from './negotiation';
import type { ContentBlock, SessionUpdate, StopReason } from './types';

/** How a turn ended, as the session queue reports it. @internal */
export type TurnOutcome = { stopReason: StopReason } | { error: ErrorObject };

/** What started the cancellation of a prompt: `session/cancel`, or `$/cancel_request` / the close. @internal */
export type CancelCause = 'session' | 'request';

/**
 * One prompt turn, as an {@link AcpAgent} `prompt` handler sees it.
 *
 * @remarks
 * The same object in both protocol versions: {@link AgentTurn.sendText} and
 * {@link AgentTurn.update} send `session/update` notifications of this session;
 * {@link AgentTurn.signal} aborts when the client cancels the turn (`session/cancel`, and in v1 a
 * `$/cancel_request` for the `session/prompt` request) or the connection closes. The handler's
 * return value (a stop reason, default `end_turn`) ends the turn; after a `session/cancel` the
 * turn ends `cancelled` whatever it returns.
 */
export class AgentTurn {
  readonly #connection: Connection;
  readonly #controller = new AbortController();
  readonly #agentMessageId = randomUUID();
  #cause: CancelCause | undefined;

  /** @internal */
  constructor(
    connection: Connection,
    /** The session the prompt was sent to. */
    readonly sessionId: string,
    /** The prompt's content blocks, as sent. */
    readonly prompt: ContentBlock[],
    /** The `session/prompt` params, as sent (`_meta` included). */
    readonly params: JsonObject,
    /** The negotiated protocol version. */
    readonly version: AcpVersion,
    /** The id of the inserted user message (v2), or `undefined` (v1). */
    readonly messageId: string | undefined,
  ) {
    this.#connection = connection;
  }

  /** Aborts when the client cancels the turn or the connection closes. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the client cancelled the turn (`session/cancel`, or in v1 `$/cancel_request`). */
  get isCancelled(): boolean {
    return this.#cause !== undefined;
  }

  /**
   * Sends one `agent_message_chunk` of text: `{content: {type: "text", text}}`, plus in v2 the
   * `messageId` of this turn's agent message.
   */
  sendText(text: string): void {
    const content = { type: 'text' as const, text };
    this.update(
      this.version === 1
        ? { sessionUpdate: 'agent_message_chunk', content }
        : { sessionUpdate: 'agent_message_chunk', messageId: this.#agentMessageId, content },
    );
  }

  /**
   * Sends one `session/update` of this session, as given: build it in the shape of
   * {@link AgentTurn.version}. Nothing is sent once the connection has closed.
   */
  update(update: SessionUpdate): void {
    if (this.#connection.isClosed) return;
    this.#connection.sendNotification(SESSION_UPDATE_METHOD, { sessionId: this.sessionId, update });
  }

  /** @internal */
  cancel(cause: CancelCause, reason?: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#cause ??= cause;
    this.#controller.abort(reason ?? RpcError.requestCancelled());
  }

  /** @internal */
  get cancelCause(): CancelCause | undefined {
    return this.#cause;
  }
}

/** A turn waiting in, or run by, a session queue. @internal */
export interface QueuedTurn {
  readonly turn: AgentTurn;
  /** Called once with the outcome (v1: answers the `session/prompt` request). */
  readonly finish: (outcome: TurnOutcome) => void;
}

/** What a session needs from its agent. @internal */
export interface SessionHost {
  readonly connection: Connection;
  /** The user's turn handler. */
  readonly runTurn: (turn: AgentTurn) => unknown;
}

/**
 * One session's prompts: admitted prompts waiting for insertion, inserted turns run one at a time in
 * insertion order, and the v2 `state_update`s around them.
 *
 * @internal
 */
export class AgentSession {
  readonly #host: SessionHost;
  readonly #admitting = new Set<(cause: CancelCause) => void>();
  readonly #queue: QueuedTurn[] = [];
  #running: QueuedTurn | undefined;

  constructor(
    host: SessionHost,
    readonly id: string,
    readonly version: AcpVersion,
  ) {
    this.#host = host;
  }

  /** Registers a prompt in admission; `session/cancel` calls `cancel('session')`. Returns the undo. */
  admitting(cancel: (cause: CancelCause) => void): () => void {
    this.#admitting.add(cancel);
    return () => this.#admitting.delete(cancel);
  }

  /** Queues an inserted turn; it runs now if the session is idle. */
  enqueue(queued: QueuedTurn): void {
    this.#queue.push(queued);
    if (!this.#running) this.#runNext(undefined);
  }

  /**
   * `session/cancel`: prompts in admission are cancelled, queued turns end `cancelled` without
   * running (v1; in v2 they are dropped, as the foreground work they belong to is cancelled), and
   * the running turn's signal aborts.
   */
  cancel(): void {
    for (const cancel of [...this.#admitting]) cancel('session');
    const queued = this.#queue.splice(0);
    if (this.version === 1) for (const { finish } of queued) finish({ stopReason: 'cancelled' });
    this.#running?.turn.cancel('session');
  }

  /** The connection closed: everything stops, nothing more is sent. */
  abandon(reason: unknown): void {
    for (const cancel of [...this.#admitting]) cancel('request');
    this.#queue.length = 0;
    this.#running?.turn.cancel('request', reason);
  }

  #runNext(previous: TurnOutcome | undefined): void {
    const next = this.#queue.shift();
    this.#running = next;
    if (!next) {
      if (previous && this.version === 2) this.#sendIdle(previous);
      return;
    }
    if (next.turn.signal.aborted) {
      // Cancelled while it waited (v1 `$/cancel_request`): it ends without running.
      return this.#end(next, () => ({ stopReason: 'cancelled' }));
    }
    if (!previous && this.version === 2) this.#update({ sessionUpdate: 'state_update', state: 'running' });
    let result: unknown;
    try {
      result = this.#host.runTurn(next.turn);
    } catch (thrown) {
      result = Promise.reject(thrown);
    }
    Promise.resolve(result).then(
      (value) => this.#end(next, () => ({ stopReason: stopReasonOf(value) })),
      (thrown: unknown) =>
        this.#end(next, () => {
          throw thrown;
        }),
    );
  }

  /** Ends the running turn: `cancelled` after a `session/cancel`, else what `outcomeOf` says. */
  #end(queued: QueuedTurn, outcomeOf: () => TurnOutcome): void {
    let outcome: TurnOutcome;
    try {
      outcome = queued.turn.cancelCause === 'session' ? { stopReason: 'cancelled' } : outcomeOf();
    } catch (thrown) {
      outcome = { error: RpcError.fromThrown(thrown) };
    }
    queued.finish(outcome);
    if (this.#host.connection.isClosed) return;
    this.#runNext(outcome);
  }

  #sendIdle(outcome: TurnOutcome): void {
    if ('error' in outcome) {
      this.#update({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { ...outcome.error } });
    } else {
      this.#update({ sessionUpdate: 'state_update', state: 'idle', stopReason: outcome.stopReason });
    }
  }

  #update(update: JsonObject): void {
    if (this.#host.connection.isClosed) return;
    this.#host.connection.sendNotification(SESSION_UPDATE_METHOD, { sessionId: this.id, update });
  }
}

function stopReasonOf(value: unknown): StopReason {
  if (value === undefined || value === null) return 'end_turn';
  if (typeof value === 'string') return value;
  throw new TypeError(`a prompt handler must return a stop reason string, not ${describeThrown(value)}`);
}
