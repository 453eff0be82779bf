/**
 * The agent side of ACP over a {@link Connection}: one set of handlers served in protocol version 1
 * or 2, whichever `initialize` negotiates.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../connection/connection';
import { RpcError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import { INITIALIZE_METHOD } from '../jsonrpc/protocol';
import type { Responder } from '../requests/responder';
import { advertisedCapabilities, servedMethods, type ServedMethods } from './agent-capabilities';
import { registerAgentMethods } from './agent-methods';
import type { AcpAgentOptions, AgentContext, AgentInitializeAnswer, AgentInitializeRequest, AgentPromptRequest } from './agent-options';
import { initializeRequest, isObject, isThenable, noop, objectParams } from './agent-params';
import type { AgentSession } from './agent-session';
import { AgentSessions, unknownSession } from './agent-sessions';
import type { CancelCause, TurnOutcome } from './agent-turn';
import { InitializeGate } from './initialize';
import {
  SESSION_CANCEL_METHOD,
  SESSION_CLOSE_METHOD,
  SESSION_DELETE_METHOD,
  SESSION_LIST_METHOD,
  SESSION_LOAD_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_RESUME_METHOD,
} from './methods';
import { ACP_PROTOCOL_VERSIONS, negotiatedVersion, recordNegotiatedVersion, selectProtocolVersion, type AcpVersion } from './negotiation';
import type * as V2 from './schema/v2';
import { StoreWriter } from './session-history';
import { MemorySessionStore } from './session-store';
import type { ContentBlock } from './types';

/**
 * The agent side of an ACP connection, from one set of handlers for ACP v1 and v2: `initialize`
 * with version negotiation, the whole session lifecycle (`session/new`, `list`, `resume`, `close`,
 * `delete`, v1 `load`), `session/prompt` turns, `session/cancel`, and the optional methods of its
 * handlers.
 *
 * @remarks
 * - `initialize` follows the initialize rules of {@link InitializeGate} (installed here): other
 *   requests wait for a successful one, a failed one can be retried. The version is negotiated
 *   as the ACP specification says (see {@link selectProtocolVersion}); the client's `info` (v2)
 *   or `clientInfo` (v1) is accepted in either version, missing ones too. From ACP v2 on, the
 *   connection answers JSON-RPC 2.0 batches.
 * - The capabilities are derived from what the agent serves: in v2 `session: {}` (the session
 *   baseline, which it always serves) and `session.delete` when its store deletes; in v1
 *   `loadSession` and `sessionCapabilities.list`/`resume`/`close`; `authMethods` only with an
 *   `authenticate` handler. An `initialize` handler adds the rest (prompt content, MCP).
 * - Sessions live in a {@link SessionStore} (default: a {@link MemorySessionStore} of its own):
 *   `session/list` pages through it (newest first, filtered by `cwd`); `session/resume` and
 *   `session/load` re-open a stored session on this connection, replaying its conversation first
 *   for `load` and for `resume` with `replayFrom: {type: "start"}`.
 * - A turn in v1: `session/prompt` is answered at the end of the turn with `{stopReason}`;
 *   `session/cancel` ends it `cancelled` (a success); a `$/cancel_request` for the prompt answers
 *   it `-32800`. In v2: the prompt is answered `{messageId}` on insertion, a `user_message`
 *   update follows, then `state_update` `running`, the turn's updates, and `state_update` `idle`
 *   with the stop reason once the session's queue is empty.
 * - `session/close` cancels the session's work as `session/cancel` does, waits for the running
 *   turn to end (its idle `cancelled` is sent first; at most `closeGraceMs`), then answers `{}`;
 *   the session sends nothing more. A session that is not open on this connection (unknown, or
 *   closed) is `-32002` "Resource not found" `{sessionId}` for `session/prompt`, `session/close`
 *   and the per-session methods — never a hang.
 * - It never closes the connection; add your own methods on it as usual.
 *
 * @example
 * ```ts
 * new AcpAgent(connectStdio(), {
 *   info: { name: 'echo-agent', version: '1.0.0' },
 *   prompt(turn) {
 *     turn.sendText('hello');
 *     return 'end_turn';
 *   },
 * });
 * ```
 */
export class AcpAgent {
  readonly #connection: Connection;
  readonly #options: AcpAgentOptions;
  readonly #supported: readonly AcpVersion[];
  readonly #sessions: AgentSessions;
  readonly #served: ServedMethods;
  readonly #gate: InitializeGate;
  #client: AgentInitializeRequest | undefined;

  /** @throws TypeError if `connection` or `options.info` or `options.prompt` is missing; RangeError for an invalid option */
  constructor(connection: Connection, options: AcpAgentOptions) {
    if (!connection || typeof connection.onRequest !== 'function') throw new TypeError('connection must be a Connection');
    if (!options || typeof options.info?.name !== 'string') throw new TypeError('options.info must name the agent');
    if (typeof options.prompt !== 'function') throw new TypeError('options.prompt must be a function');
    const grace = options.closeGraceMs;
    if (grace !== undefined && !(Number.isInteger(grace) && grace >= 0))
      throw new RangeError('options.closeGraceMs must be a non-negative integer');
    this.#connection = connection;
    this.#options = options;
    this.#supported = options.protocolVersions ?? ACP_PROTOCOL_VERSIONS;
    if (this.#supported.length === 0) throw new RangeError('options.protocolVersions must list at least one version');
    const store = options.sessions ?? new MemorySessionStore();
    this.#served = servedMethods(options, store);
    const context = (responder: Responder): AgentContext => this.#context(responder);
    const version = (): AcpVersion => this.#version();
    this.#sessions = new AgentSessions({ connection, options, records: new StoreWriter(store, connection.logger), version, context });
    this.#gate = new InitializeGate(connection);
    this.#route(connection);
    registerAgentMethods({ connection, options, context, isOpen: (sessionId) => this.#sessions.open(sessionId) !== undefined });
    connection.once('close', () => this.#sessions.abandonAll());
  }

  #route(connection: Connection): void {
    const sessions = this.#sessions;
    connection.onRequest(INITIALIZE_METHOD, (params, responder) => this.#initialize(params, responder));
    connection.onRequest(SESSION_NEW_METHOD, (params, responder) => sessions.newSession(params, responder));
    connection.onRequest(SESSION_LIST_METHOD, (params) => sessions.list(params));
    connection.onRequest(SESSION_RESUME_METHOD, (params, responder) => sessions.attach(SESSION_RESUME_METHOD, params, responder));
    connection.onRequest(SESSION_LOAD_METHOD, (params, responder) => {
      if (this.#version() !== 1) throw RpcError.methodNotFound(SESSION_LOAD_METHOD);
      return sessions.attach(SESSION_LOAD_METHOD, params, responder);
    });
    connection.onRequest(SESSION_CLOSE_METHOD, (params, responder) => sessions.close(params, responder));
    connection.onRequest(SESSION_DELETE_METHOD, (params, responder) => {
      if (!this.#served.delete) throw RpcError.methodNotFound(SESSION_DELETE_METHOD);
      return sessions.delete(params, responder);
    });
    connection.onRequest(SESSION_PROMPT_METHOD, (params, responder) => this.#prompt(params, responder));
    connection.onNotification(SESSION_CANCEL_METHOD, (params) => this.#cancel(params));
  }

  /** The connection this agent serves. */
  get connection(): Connection {
    return this.#connection;
  }

  /** The negotiated protocol version, once `initialize` succeeded. */
  get protocolVersion(): AcpVersion | undefined {
    return negotiatedVersion(this.#connection) as AcpVersion | undefined;
  }

  /** The client's successful `initialize` request (its info and capabilities), or `undefined`. */
  get client(): AgentInitializeRequest | undefined {
    return this.#gate.state === 'ready' ? this.#client : undefined;
  }

  #initialize(params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    const negotiate = this.#options.negotiate ?? ((p, supported) => selectProtocolVersion(p.protocolVersion, supported));
    const version = negotiate(object, this.#supported) as AcpVersion;
    const request = initializeRequest(object, version);
    const handler = this.#options.initialize;
    const answer = handler ? handler(request, { version, signal: responder.signal }) : {};
    const send = (value: AgentInitializeAnswer | undefined): undefined => {
      if (value === undefined) return undefined;
      responder.respond(this.#initializeResult(version, value));
      this.#client = request;
      recordNegotiatedVersion(this.#connection, version);
      return undefined;
    };
    return isThenable(answer) ? Promise.resolve(answer).then(send) : send(answer);
  }

  #initializeResult(version: AcpVersion, answer: AgentInitializeAnswer): JsonObject {
    const info = (answer.info ?? this.#options.info) as unknown as JsonObject;
    const { capabilities, authMethods } = advertisedCapabilities(version, answer, this.#served);
    if (answer.authMethods?.length && !authMethods) {
      this.#connection.logger.log('warn', 'initialize: authMethods left out: the agent has no authenticate handler');
    }
    const result: JsonObject =
      version === 1
        ? { protocolVersion: 1, agentInfo: info, agentCapabilities: capabilities, authMethods: authMethods ?? [] }
        : { protocolVersion: version, info, capabilities };
    if (version !== 1 && authMethods !== undefined) result.authMethods = authMethods;
    if (answer._meta !== undefined) result._meta = answer._meta;
    return result;
  }

  #prompt(params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    const { sessionId, prompt } = object;
    if (typeof sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
    if (!Array.isArray(prompt) || prompt.length === 0) throw RpcError.invalidParams('`prompt` must be a non-empty array');
    const session = this.#sessions.open(sessionId);
    if (!session) throw unknownSession(sessionId);
    const request: AgentPromptRequest = { sessionId, prompt: prompt as unknown as ContentBlock[], params: object };
    // Synchronous when `admitPrompt` is: a prompt is then inserted before any later line is read.
    const admitted = this.#admit(session, request, responder);
    return isThenable(admitted)
      ? Promise.resolve(admitted).then((cause) => this.#insert(session, request, responder, cause))
      : this.#insert(session, request, responder, admitted);
  }

  /** Inserts an admitted prompt, or answers the cancellation that stopped it. */
  #insert(session: AgentSession, request: AgentPromptRequest, responder: Responder, cancelledBy: CancelCause | undefined): unknown {
    const version = session.version;
    if (cancelledBy === 'request') throw RpcError.requestCancelled();
    if (cancelledBy === 'session') {
      if (version === 1) return { stopReason: 'cancelled' };
      throw RpcError.requestCancelled();
    }
    if (version === 1) return this.#runV1Turn(session, request, responder);
    // Inserted: from here the answer is success, whatever cancel races it.
    const messageId = randomUUID();
    responder.respond({ messageId });
    const queued = session.newTurn(request.prompt, request.params, messageId, noop);
    queued.turn.update({ sessionUpdate: 'user_message', messageId, content: request.prompt as V2.ContentBlock[] });
    session.enqueue(queued);
    return undefined;
  }
  /** Runs `admitPrompt`; returns (or resolves with) what cancelled the prompt meanwhile, if anything did. */
  #admit(
    session: AgentSession,
    request: AgentPromptRequest,
    responder: Responder,
  ): CancelCause | undefined | PromiseLike<CancelCause | undefined> {
    const admit = this.#options.admitPrompt;
    if (!admit) return undefined;
    const controller = new AbortController();
    let cause: CancelCause | undefined;
    const cancel = (by: CancelCause): void => {
      cause ??= by;
      controller.abort(RpcError.requestCancelled());
    };
    // The listener must not hold the responder: a dropped responder is still answered automatically.
    const onAbort = (): void => cancel('request');
    const requestSignal = responder.signal;
    requestSignal.addEventListener('abort', onAbort);
    const undo = session.admitting(cancel);
    const done = (): CancelCause | undefined => {
      undo();
      requestSignal.removeEventListener('abort', onAbort);
      return cause;
    };
    // A handler that stops by throwing on the abort: the cancellation is the answer.
    const failed = (thrown: unknown): CancelCause => {
      if (done() === undefined) throw thrown;
      return cause!;
    };
    let returned: unknown;
    try {
      returned = admit(request, { version: session.version, signal: controller.signal });
    } catch (thrown) {
      return failed(thrown);
    }
    return isThenable(returned) ? Promise.resolve(returned).then(done, failed) : done();
  }

  /**
   * v1: the `session/prompt` request is the turn; its answer is the turn's end, sent as soon as the
   * turn ends (before the session's next turn starts).
   */
  #runV1Turn(session: AgentSession, request: AgentPromptRequest, responder: Responder): Promise<undefined> {
    // The returned promise keeps the request pending without the drop watch; the answer goes out at
    // the turn's end.
    return new Promise<undefined>((resolve) => {
      const requestSignal = responder.signal;
      const finish = (outcome: TurnOutcome): void => {
        requestSignal.removeEventListener('abort', onAbort);
        resolve(undefined);
        if (responder.hasResponded) return;
        if (queued.turn.cancelCause === 'request') responder.respondCancelled();
        else if ('error' in outcome) responder.respondWithError(outcome.error);
        else responder.respond({ stopReason: outcome.stopReason });
      };
      const queued = session.newTurn(request.prompt, request.params, randomUUID(), finish);
      const onAbort = (): void => queued.turn.cancel('request');
      requestSignal.addEventListener('abort', onAbort);
      session.enqueue(queued);
    });
  }

  #cancel(params: unknown): void {
    if (isObject(params) && typeof params.sessionId === 'string') this.#sessions.open(params.sessionId)?.cancel();
    this.#options.onCancelSession?.(params);
  }

  #context(responder: Responder): AgentContext {
    return { version: this.#version(), signal: responder.signal };
  }

  #version(): AcpVersion {
    // Requests other than initialize only reach the handlers once initialize succeeded.
    return (negotiatedVersion(this.#connection) ?? this.#supported[this.#supported.length - 1]) as AcpVersion;
  }
}
