/**
 * The agent side of a prompt turn: the {@link AgentTurn} a handler works with.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { RpcError } from '../jsonrpc/errors';
import type { ErrorObject, JsonObject } from '../jsonrpc/message';
import type { AcpVersion } from './negotiation';
import type { ContentBlock, SessionUpdate, StopReason } from './types';

/** How a turn ended, as the session queue reports it. @internal */
export type TurnOutcome = { stopReason: StopReason } | { error: ErrorObject };

/** What started the cancellation of a prompt: `session/cancel` or `session/close`, or `$/cancel_request` / the connection's close. @internal */
export type CancelCause = 'session' | 'request';

/** Where a session works: its directory and further roots, as the client last gave them. @internal */
export interface SessionWorkspace {
  readonly cwd: string;
  readonly additionalDirectories: readonly string[];
}

/** Where a turn's updates go: its session, which sends them while it is open and keeps its messages. @internal */
export interface TurnHost {
  /** Sends one `session/update` of the session (nothing once the session or connection closed). */
  send(update: SessionUpdate): void;
}

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
  readonly #host: TurnHost;
  readonly #controller = new AbortController();
  readonly #agentMessageId = randomUUID();
  #cause: CancelCause | undefined;

  /** @internal */
  constructor(
    host: TurnHost,
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
    workspace: SessionWorkspace,
  ) {
    this.#host = host;
    this.cwd = workspace.cwd;
    this.additionalDirectories = workspace.additionalDirectories;
  }

  /** The session's working directory: an absolute path. */
  readonly cwd: string;

  /** The session's further workspace roots (absolute paths; `[]` when the client gave none). */
  readonly additionalDirectories: readonly string[];

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
   * {@link AgentTurn.version}. Nothing is sent once the session (`session/close`) or the
   * connection has closed. Its messages (`agent_message_chunk`, …) are kept in the session's
   * conversation, which `session/resume` replays.
   */
  update(update: SessionUpdate): void {
    this.#host.send(update);
  }

  /** The id of this turn's agent message: what {@link AgentTurn.sendText} gives its chunks. @internal */
  get agentMessageId(): string {
    return this.#agentMessageId;
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
