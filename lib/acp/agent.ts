/**
 * The agent side of ACP over a {@link Connection}: one set of handlers served in protocol version 1
 * or 2, whichever `initialize` negotiates.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../connection/connection';
import { ErrorCode, RpcError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import { INITIALIZE_METHOD } from '../jsonrpc/protocol';
import type { Responder } from '../requests/responder';
import { AgentSession, AgentTurn, type CancelCause, type TurnOutcome } from './agent-turn';
import { initializeRequest, isObject, isThenable, noop, objectParams } from './agent-params';
import { InitializeGate } from './initialize';
import {
  SESSION_CANCEL_METHOD,
  SESSION_LOAD_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_RESUME_METHOD,
  SESSION_UPDATE_METHOD,
} from './methods';
import { ACP_PROTOCOL_VERSIONS, negotiatedVersion, recordNegotiatedVersion, selectProtocolVersion, type AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import type { ContentBlock, Implementation, StopReason } from './types';

/** What every {@link AcpAgent} handler receives beside its request. */
export interface AgentContext {
  /** The negotiated protocol version. */
  readonly version: AcpVersion;
  /** Aborts when the client cancels the request (`$/cancel_request`) or the connection closes. */
  readonly signal: AbortSignal;
}

/** An `initialize` request, as the agent's `initialize` handler sees it. */
export type AgentInitializeRequest = {
  /** The `protocolVersion` the client requested. */
  readonly requestedVersion: number;
  /** The client's name and version (v2 `info`, or v1 `clientInfo`), when it sent one. */
  readonly clientInfo: Implementation | undefined;
  /** The params as sent. */
  readonly params: JsonObject;
} & (
  | {
      /** The negotiated version is 1: `clientCapabilities` has the v1 shape. */
      readonly version: 1;
      /** The v1 `clientCapabilities` the client sent; `undefined` when absent or not an object. */
      readonly clientCapabilities: V1.ClientCapabilities | undefined;
    }
  | {
      /** The negotiated version is 2: `clientCapabilities` has the v2 shape. */
      readonly version: 2;
      /** The v2 `capabilities` the client sent; `undefined` when absent or not an object. */
      readonly clientCapabilities: V2.ClientCapabilities | undefined;
    }
);

/** What the agent answers `initialize` with, in the negotiated version's shape. */
export interface AgentInitializeAnswer {
  /** Default: {@link AcpAgentOptions.info}. */
  info?: Implementation;
  /** v1 `agentCapabilities` or v2 `capabilities`. Default `{}`. */
  capabilities?: V1.AgentCapabilities | V2.AgentCapabilities;
  /** Default: `[]` in v1, absent in v2. */
  authMethods?: (V1.AuthMethod | V2.AuthMethod)[];
  /** ACP's reserved extension metadata: copied into the result as given. Default: absent. */
  _meta?: JsonObject;
}

/** A `session/new` request, as the agent's `newSession` handler sees it. */
export interface AgentNewSessionRequest {
  /** The session's working directory, as the client sent it (checked to be a string). */
  readonly cwd: string;
  /** The params as sent. */
  readonly params: JsonObject;
}

/** What the agent answers `session/new` with: a `sessionId` (default a new UUID) and any other result fields. */
export interface AgentNewSessionAnswer {
  /** The new session's id; prompts name it. Default: a new random UUID. */
  sessionId?: string;
  [field: string]: unknown;
}

/** A `session/load` (v1) or `session/resume` (v2) request, as the agent's `attachSession` handler sees it. */
export interface AgentAttachSessionRequest {
  /** Which method: v1 `session/load` (replay the history, as `session/update`s, before answering) or v2 `session/resume`. */
  readonly method: typeof SESSION_LOAD_METHOD | typeof SESSION_RESUME_METHOD;
  /** The session to re-attach (checked to be a string). */
  readonly sessionId: string;
  /** Its working directory, as the client sent it (checked to be a string). */
  readonly cwd: string;
  /** The params as sent. */
  readonly params: JsonObject;
}

/** A `session/prompt` request before its insertion, as `admitPrompt` sees it. */
export interface AgentPromptRequest {
  /** The session the prompt is for: one this agent created. */
  readonly sessionId: string;
  /** The user's message: a non-empty array of content blocks (not checked further). */
  readonly prompt: ContentBlock[];
  /** The params as sent (`_meta` included). */
  readonly params: JsonObject;
}

/** Options and handlers of an {@link AcpAgent}. */
export interface AcpAgentOptions {
  /** The agent's name and version: v1 `agentInfo`, v2 `info`. */
  info: Implementation;
  /** The versions this agent speaks. Default `[1, 2]`. */
  protocolVersions?: readonly AcpVersion[];
  /**
   * Chooses the version for an `initialize`'s params; throw an `RpcError` to refuse. Default:
   * {@link selectProtocolVersion} of `params.protocolVersion` among `protocolVersions`.
   */
  negotiate?: (params: JsonObject, supported: readonly AcpVersion[]) => number;
  /**
   * Answers `initialize` (default: `info` and empty capabilities). Throw to fail it (the client may
   * retry); return `undefined` to leave it unanswered: the library then answers automatically
   * once the request is dropped, as for any acp-wire handler.
   */
  initialize?: (
    request: AgentInitializeRequest,
    context: AgentContext,
  ) => AgentInitializeAnswer | undefined | Promise<AgentInitializeAnswer | undefined>;
  /** Creates a session (default: a new UUID). `undefined` leaves the request unanswered, as above. */
  newSession?: (
    request: AgentNewSessionRequest,
    context: AgentContext,
  ) => AgentNewSessionAnswer | undefined | Promise<AgentNewSessionAnswer | undefined>;
  /**
   * Re-attaches a session on this connection: ACP v1 `session/load`, v2 `session/resume` (both
   * served only when this handler is given; advertise them yourself: v1 `loadSession: true`, v2
   * `session: {}`). Answer with the result (`{}` at least) to accept: the session then takes
   * prompts here (v2: an idle `state_update` is sent before the answer, as the schema requires);
   * throw an `RpcError` to refuse (`-32002` for a session the agent does not know). `undefined`
   * leaves the request unanswered, as above. Sessions are per connection: an agent that re-attaches
   * a session made on another connection keeps what it needs of it itself.
   */
  attachSession?: (request: AgentAttachSessionRequest, context: AgentContext) => JsonObject | undefined | Promise<JsonObject | undefined>;
  /**
   * Runs before a prompt is inserted (validate it, hold it): throw to refuse it. Its
   * `context.signal` also aborts on `session/cancel`; once aborted, the prompt is answered
   * `-32800` (v1: `{stopReason: "cancelled"}` after a `session/cancel`) and never inserted.
   */
  admitPrompt?: (request: AgentPromptRequest, context: AgentContext) => unknown;
  /** Runs one turn; resolves with its stop reason (default `end_turn`). See {@link AgentTurn}. */
  prompt: (turn: AgentTurn) => StopReason | void | Promise<StopReason | void>;
  /** Observes every `session/cancel` notification (after its session's work was cancelled). */
  onCancelSession?: (params: unknown) => void;
}

/**
 * The agent side of an ACP connection: `initialize` with version negotiation, `session/new`,
 * `session/prompt` turns and `session/cancel`, from one set of handlers for ACP v1 and v2.
 *
 * @remarks
 * - `initialize` follows the initialize rules of {@link InitializeGate} (installed here): other
 *   requests wait for a successful one, a failed one can be retried. The version is negotiated
 *   as the ACP specification says (see {@link selectProtocolVersion}); the client's `info` (v2)
 *   or `clientInfo` (v1) is accepted in either version, missing ones too.
 * - A turn in v1: `session/prompt` is answered at the end of the turn with `{stopReason}`;
 *   `session/cancel` ends it `cancelled` (a success); a `$/cancel_request` for the prompt answers
 *   it `-32800`. In v2: the prompt is answered `{messageId}` on insertion, a `user_message`
 *   update follows, then `state_update` `running`, the turn's updates, and `state_update` `idle`
 *   with the stop reason once the session's queue is empty.
 * - Turns of one session run one at a time, in insertion order. `session/prompt` for a session
 *   this agent did not create is answered `-32002` "Resource not found" `{sessionId}`.
 * - It registers the handlers of `initialize`, `session/new`, `session/prompt` and `session/cancel`;
 *   add your own methods on the connection as usual. It never closes the connection.
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
  readonly #sessions = new Map<string, AgentSession>();
  readonly #gate: InitializeGate;
  #client: AgentInitializeRequest | undefined;

  /** @throws TypeError if `connection` or `options.info` or `options.prompt` is missing */
  constructor(connection: Connection, options: AcpAgentOptions) {
    if (!connection || typeof connection.onRequest !== 'function') throw new TypeError('connection must be a Connection');
    if (!options || typeof options.info?.name !== 'string') throw new TypeError('options.info must name the agent');
    if (typeof options.prompt !== 'function') throw new TypeError('options.prompt must be a function');
    this.#connection = connection;
    this.#options = options;
    this.#supported = options.protocolVersions ?? ACP_PROTOCOL_VERSIONS;
    if (this.#supported.length === 0) throw new RangeError('options.protocolVersions must list at least one version');
    this.#gate = new InitializeGate(connection);
    connection.onRequest(INITIALIZE_METHOD, (params, responder) => this.#initialize(params, responder));
    connection.onRequest(SESSION_NEW_METHOD, (params, responder) => this.#newSession(params, responder));
    connection.onRequest(SESSION_PROMPT_METHOD, (params, responder) => this.#prompt(params, responder));
    connection.onNotification(SESSION_CANCEL_METHOD, (params) => this.#cancel(params));
    if (options.attachSession) {
      connection.onRequest(SESSION_LOAD_METHOD, (params, responder) => this.#attach(SESSION_LOAD_METHOD, params, responder));
      connection.onRequest(SESSION_RESUME_METHOD, (params, responder) => this.#attach(SESSION_RESUME_METHOD, params, responder));
    }
    connection.once('close', () => {
      for (const session of this.#sessions.values()) session.abandon(undefined);
    });
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
    const capabilities = (answer.capabilities ?? {}) as JsonObject;
    const result: JsonObject =
      version === 1
        ? {
            protocolVersion: 1,
            agentInfo: info,
            agentCapabilities: capabilities,
            authMethods: (answer.authMethods ?? []) as unknown as JsonObject[],
          }
        : { protocolVersion: version, info, capabilities };
    if (version !== 1 && answer.authMethods !== undefined) result.authMethods = answer.authMethods as unknown as JsonObject[];
    if (answer._meta !== undefined) result._meta = answer._meta;
    return result;
  }

  #newSession(params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    if (typeof object.cwd !== 'string') throw RpcError.invalidParams('`cwd` must be a string');
    const handler = this.#options.newSession;
    const answer = handler ? handler({ cwd: object.cwd, params: object }, this.#context(responder)) : {};
    const send = (value: AgentNewSessionAnswer | undefined): undefined => {
      if (value === undefined) return undefined;
      const sessionId = value.sessionId ?? randomUUID();
      if (typeof sessionId !== 'string') throw new TypeError('a newSession handler must answer a string sessionId');
      this.#sessions.set(sessionId, new AgentSession(this.#sessionHost(), sessionId, this.#version()));
      responder.respond({ ...value, sessionId });
      return undefined;
    };
    return isThenable(answer) ? Promise.resolve(answer).then(send) : send(answer);
  }

  #attach(method: AgentAttachSessionRequest['method'], params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    const { sessionId, cwd } = object;
    if (typeof sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
    if (typeof cwd !== 'string') throw RpcError.invalidParams('`cwd` must be a string');
    const answer = this.#options.attachSession!({ method, sessionId, cwd, params: object }, this.#context(responder));
    const send = (value: unknown): undefined => {
      if (value === undefined) return undefined;
      const version = this.#version();
      if (!this.#sessions.has(sessionId)) this.#sessions.set(sessionId, new AgentSession(this.#sessionHost(), sessionId, version));
      if (version === 2) {
        const update = { sessionUpdate: 'state_update', state: 'idle' };
        this.#connection.sendNotification(SESSION_UPDATE_METHOD, { sessionId, update });
      }
      responder.respond(value as JsonObject);
      return undefined;
    };
    return isThenable(answer) ? Promise.resolve(answer).then(send) : send(answer);
  }

  #sessionHost(): { connection: Connection; runTurn: (turn: AgentTurn) => unknown } {
    return { connection: this.#connection, runTurn: (turn: AgentTurn) => this.#options.prompt(turn) };
  }

  #prompt(params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    const { sessionId, prompt } = object;
    if (typeof sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
    if (!Array.isArray(prompt) || prompt.length === 0) throw RpcError.invalidParams('`prompt` must be a non-empty array');
    const session = this.#sessions.get(sessionId);
    if (!session) throw new RpcError(ErrorCode.ResourceNotFound, 'Resource not found', { sessionId });
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
    const turn = new AgentTurn(this.#connection, session.id, request.prompt, request.params, version, messageId);
    turn.update({ sessionUpdate: 'user_message', messageId, content: request.prompt as V2.ContentBlock[] });
    session.enqueue({ turn, finish: noop });
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
    const turn = new AgentTurn(this.#connection, session.id, request.prompt, request.params, 1, undefined);
    const onAbort = (): void => turn.cancel('request');
    const requestSignal = responder.signal;
    requestSignal.addEventListener('abort', onAbort);
    // The returned promise keeps the request pending without the drop watch; the answer goes out at
    // the turn's end.
    return new Promise<undefined>((resolve) => {
      const finish = (outcome: TurnOutcome): void => {
        requestSignal.removeEventListener('abort', onAbort);
        resolve(undefined);
        if (responder.hasResponded) return;
        if (turn.cancelCause === 'request') responder.respondCancelled();
        else if ('error' in outcome) responder.respondWithError(outcome.error);
        else responder.respond({ stopReason: outcome.stopReason });
      };
      session.enqueue({ turn, finish });
    });
  }

  #cancel(params: unknown): void {
    if (isObject(params) && typeof params.sessionId === 'string') this.#sessions.get(params.sessionId)?.cancel();
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
