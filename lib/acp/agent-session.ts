/**
 * One session open on an agent's connection: prompts in admission, inserted turns run one at a
 * time, the v2 `state_update`s around them, `session/cancel` and `session/close`, and the
 * conversation each turn adds to the session store.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../connection/connection';
import { RpcError, describeThrown } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import { AgentTurn, type CancelCause, type SessionWorkspace, type TurnOutcome } from './agent-turn';
import { SESSION_UPDATE_METHOD } from './methods';
import type { AcpVersion } from './negotiation';
import { MessageCollector, type StoreWriter } from './session-history';
import type { ContentBlock, SessionUpdate, StopReason } from './types';

/** A turn waiting in, or run by, a session queue. @internal */
export interface QueuedTurn {
  readonly turn: AgentTurn;
  /** Gathers the turn's messages for the session's conversation. */
  readonly messages: MessageCollector;
  /** Called once with the outcome (v1: answers the `session/prompt` request). */
  readonly finish: (outcome: TurnOutcome) => void;
}

/** What a session needs from its agent. @internal */
export interface SessionHost {
  readonly connection: Connection;
  /** The user's turn handler. */
  readonly runTurn: (turn: AgentTurn) => unknown;
  /** Where the session's conversation and activity are written. */
  readonly records: StoreWriter;
}

/** The outcome of a turn that `session/close` ended without waiting for its handler. */
const CANCELLED: TurnOutcome = Object.freeze({ stopReason: 'cancelled' });

/**
 * One session's prompts on one connection.
 *
 * @internal
 */
export class AgentSession {
  readonly #host: SessionHost;
  readonly #admitting = new Set<(cause: CancelCause) => void>();
  readonly #queue: QueuedTurn[] = [];
  /** Called once the session has no running turn. */
  #idleWaiters: (() => void)[] = [];
  #running: QueuedTurn | undefined;
  #isClosed = false;

  /** Where the session works: set when it is made or re-attached, read by each new turn. */
  workspace: SessionWorkspace;

  constructor(
    host: SessionHost,
    readonly id: string,
    readonly version: AcpVersion,
    workspace: SessionWorkspace,
  ) {
    this.#host = host;
    this.workspace = workspace;
  }

  /** Whether a turn is running now. */
  get isRunning(): boolean {
    return this.#running !== undefined;
  }

  /** Registers a prompt in admission; `session/cancel` calls `cancel('session')`. Returns the undo. */
  admitting(cancel: (cause: CancelCause) => void): () => void {
    this.#admitting.add(cancel);
    return () => this.#admitting.delete(cancel);
  }

  /**
   * Makes the turn of an inserted prompt, with the id of its user message (v2: the one answered;
   * v1: one for the conversation). Its updates are sent while the session is open and its messages
   * kept.
   */
  newTurn(prompt: ContentBlock[], params: JsonObject, messageId: string, finish: QueuedTurn['finish']): QueuedTurn {
    const messages = new MessageCollector({ user: messageId, agent: randomUUID(), thought: randomUUID() });
    const turn = new AgentTurn(
      { send: (update) => this.#sendFromTurn(messages, update) },
      this.id,
      prompt,
      params,
      this.version,
      this.version === 2 ? messageId : undefined,
      this.workspace,
    );
    messages.take({ sessionUpdate: 'user_message', messageId, content: prompt } as SessionUpdate);
    messages.take({ sessionUpdate: 'agent_message', messageId: turn.agentMessageId, content: [] } as SessionUpdate);
    this.#host.records.update(this.id, { updatedAt: new Date().toISOString() });
    return { turn, messages, finish };
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
    if (this.version === 1) for (const { finish } of queued) finish(CANCELLED);
    this.#running?.turn.cancel('session');
  }

  /**
   * `session/close`: cancels as `session/cancel` does, then resolves once the running turn has
   * ended (its idle `cancelled` sent in v2), or after `graceMs` — the turn is then reported ended
   * `cancelled` at once. From then on the session sends nothing.
   */
  close(graceMs: number): Promise<void> {
    this.cancel();
    if (!this.#running) {
      this.#isClosed = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const running = this.#running!;
      const timer = setTimeout(() => this.#endNow(running), graceMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        this.#isClosed = true;
        resolve();
      });
    });
  }

  /** The connection closed: everything stops, nothing more is sent. */
  abandon(reason: unknown): void {
    this.#isClosed = true;
    for (const cancel of [...this.#admitting]) cancel('request');
    this.#queue.length = 0;
    this.#running?.turn.cancel('request', reason);
    this.#settleIdleWaiters();
  }

  /** Sends one of the session's own updates (replay, state), unless the session or connection closed. */
  send(update: SessionUpdate | JsonObject): void {
    if (this.#isClosed || this.#host.connection.isClosed) return;
    this.#host.connection.sendNotification(SESSION_UPDATE_METHOD, { sessionId: this.id, update });
  }

  #sendFromTurn(messages: MessageCollector, update: SessionUpdate): void {
    if (this.#isClosed || this.#host.connection.isClosed) return;
    messages.take(update);
    const title = update.sessionUpdate === 'session_info_update' ? (update as { title?: unknown }).title : undefined;
    if (typeof title === 'string') this.#host.records.update(this.id, { title });
    this.send(update);
  }

  #runNext(previous: TurnOutcome | undefined): void {
    const next = this.#queue.shift();
    this.#running = next;
    if (!next) {
      if (previous && this.version === 2) this.#sendIdle(previous);
      return this.#settleIdleWaiters();
    }
    if (next.turn.signal.aborted) {
      // Cancelled while it waited (v1 `$/cancel_request`): it ends without running.
      return this.#end(next, () => CANCELLED);
    }
    if (!previous && this.version === 2) this.send({ sessionUpdate: 'state_update', state: 'running' });
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
    // A turn that `session/close` already reported ended.
    if (this.#running !== queued) return;
    let outcome: TurnOutcome;
    try {
      outcome = queued.turn.cancelCause === 'session' ? CANCELLED : outcomeOf();
    } catch (thrown) {
      outcome = { error: RpcError.fromThrown(thrown) };
    }
    this.#finish(queued, outcome);
  }

  /** `session/close` waited long enough: the running turn is reported ended `cancelled` now. */
  #endNow(queued: QueuedTurn): void {
    if (this.#running === queued) this.#finish(queued, CANCELLED);
  }

  #finish(queued: QueuedTurn, outcome: TurnOutcome): void {
    queued.finish(outcome);
    const records = this.#host.records;
    records.append(this.id, queued.messages.messages());
    records.update(this.id, { updatedAt: new Date().toISOString() });
    if (this.#host.connection.isClosed) return;
    this.#runNext(outcome);
  }

  #settleIdleWaiters(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const waiter of waiters) waiter();
  }

  #sendIdle(outcome: TurnOutcome): void {
    if ('error' in outcome) {
      this.send({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { ...outcome.error } });
    } else {
      this.send({ sessionUpdate: 'state_update', state: 'idle', stopReason: outcome.stopReason });
    }
  }
}

function stopReasonOf(value: unknown): StopReason {
  if (value === undefined || value === null) return 'end_turn';
  if (typeof value === 'string') return value;
  throw new TypeError(`a prompt handler must return a stop reason string, not ${describeThrown(value)}`);
}
