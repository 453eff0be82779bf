/**
 * The client side of ACP over a {@link Connection}, the same API in protocol versions 1 and 2:
 * `initialize` with version negotiation, sessions, prompt turns and the agent's requests.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { toDisposable, type Disposable } from '../support/disposable';
import { ConnectionClosedError } from '../jsonrpc/errors';
import type { JsonObject, JsonValue } from '../jsonrpc/message';
import { INITIALIZE_METHOD } from '../jsonrpc/protocol';
import type { SendRequestOptions, SentRequest } from '../requests/sent-request';
import {
  PermissionRequests,
  clientCapabilitiesOf,
  clientV2CapabilitiesOf,
  registerClientHandlers,
  type AcpClientHandlers,
} from './client-handlers';
import {
  AUTHENTICATE_METHOD,
  AUTH_LOGIN_METHOD,
  AUTH_LOGOUT_METHOD,
  LOGOUT_METHOD,
  SESSION_CANCEL_METHOD,
  SESSION_CLOSE_METHOD,
  SESSION_DELETE_METHOD,
  SESSION_LIST_METHOD,
  SESSION_LOAD_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_RESUME_METHOD,
  SESSION_SET_CONFIG_OPTION_METHOD,
  SESSION_SET_MODE_METHOD,
  SESSION_UPDATE_METHOD,
  TERMINAL_CANCEL_METHOD,
  TOOL_CALL_CANCEL_METHOD,
} from './methods';
import { ACP_PROTOCOL_VERSIONS, acceptProtocolVersion, negotiatedVersion, recordNegotiatedVersion, type AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import { describeAgent, isSessionUpdate } from './client-messages';
import { SessionReattacher, type ReattachHost, type ReattachOptions } from './session-reattach';
import { PromptTurn, type PromptOptions } from './turn';
import type {
  AgentInitialization,
  ClientInitializeParams,
  ListSessionsParams,
  NewSessionParams,
  PromptParams,
  ResumeSessionParams,
  SessionUpdateHandler,
  SessionUpdateOptions,
  SetConfigOptionParams,
} from './client-params';
import type { Implementation } from './types';

/** Options of an {@link AcpClient}. */
export interface AcpClientOptions {
  /** The client's name and version, sent in `initialize`. Default `{name: "acp-wire-client", version: "unspecified"}`. */
  info?: Implementation;
  /** The versions this client speaks. Default `[1, 2]`. */
  protocolVersions?: readonly AcpVersion[];
  /** Answers to the agent's requests (see {@link AcpClient.handle}). */
  handlers?: AcpClientHandlers;
  /**
   * Re-attaches the client's sessions on a new connection when the transport could not resume
   * its connection (`ResumeFailedError`) or the server went away (`ServerGoingAwayError`, a
   * drain): see {@link AcpClient} and docs/resume.md. Default off.
   */
  reattach?: ReattachOptions;
}

interface Subscription {
  readonly handler: SessionUpdateHandler;
  readonly sessionId: string | undefined;
}

const DEFAULT_INFO: Implementation = Object.freeze({ name: 'acp-wire-client', version: 'unspecified' });

/**
 * The client side of an ACP connection, version-neutral: it offers ACP v2, accepts v1, and maps
 * both to one API.
 *
 * @remarks
 * - {@link AcpClient.initialize} negotiates the version (kept per connection: see
 *   {@link negotiatedVersion}); {@link AcpClient.prompt} returns a {@link PromptTurn} whose end is
 *   the v1 answer or the v2 idle update; {@link AcpClient.handle} answers the agent's requests.
 * - Every request is an ordinary {@link SentRequest} (`$/cancel_request` with `cancel()`).
 * - It registers the connection's one `session/update` handler while a turn or a subscription
 *   needs it, and the handlers given to {@link AcpClient.handle}. It never closes the connection.
 *
 * @example
 * ```ts
 * const agent = spawnConnection('node', ['agent.js']);
 * const client = new AcpClient(agent.connection);
 * const { protocolVersion } = await client.initialize();
 * const { sessionId } = await client.newSession({ cwd: process.cwd() });
 * const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hello' }] });
 * for await (const update of turn) console.log(update.sessionUpdate);
 * console.log(`ACP v${protocolVersion}:`, (await turn).stopReason);
 * await agent.close();
 * ```
 */
export class AcpClient {
  #connection: Connection;
  readonly #info: Implementation;
  readonly #supported: readonly AcpVersion[];
  readonly #subscriptions = new Set<Subscription>();
  readonly #turns = new Set<PromptTurn>();
  readonly #handlers: AcpClientHandlers[] = [];
  /** Each handlers object's registration on the current connection. */
  readonly #registrations = new Map<AcpClientHandlers, Disposable>();
  readonly #permissions = new PermissionRequests();
  readonly #reattacher: SessionReattacher | undefined;
  #registration: Disposable | undefined;
  #agent: AgentInitialization | undefined;
  /** The params of the last successful `initialize`, sent again on a new connection. */
  #initialized: ClientInitializeParams | undefined;
  /** The fallback under way (the next one waits for it). */
  #reattaching: Promise<void> = Promise.resolve();

  /** @throws TypeError if `connection` is missing or a handler is invalid */
  constructor(connection: Connection, options: AcpClientOptions = {}) {
    if (!connection || typeof connection.sendRequest !== 'function') throw new TypeError('connection must be a Connection');
    this.#connection = connection;
    this.#info = options.info ?? DEFAULT_INFO;
    this.#supported = options.protocolVersions ?? ACP_PROTOCOL_VERSIONS;
    if (this.#supported.length === 0) throw new RangeError('options.protocolVersions must list at least one version');
    this.#reattacher = options.reattach === undefined ? undefined : new SessionReattacher(options.reattach);
    this.#connection = connection;
    this.#watchClose(connection);
    if (options.handlers) this.handle(options.handlers);
  }

  #watchClose(connection: Connection): void {
    connection.once('close', (_reason: unknown, error: unknown) => {
      const cause = error === undefined ? undefined : { cause: error };
      for (const turn of [...this.#turns])
        turn.fail(new ConnectionClosedError(connection.closeReason ?? 'closed locally', SESSION_PROMPT_METHOD, cause));
      const reattacher = this.#reattacher;
      if (reattacher?.shouldReattach(error) && connection === this.#connection) {
        this.#reattaching = this.#reattaching.then(() => reattacher.reattach(this.#reattachHost(), error));
      }
    });
  }

  /** Moves the client onto a new connection: its handlers and `session/update` delivery follow. */
  #bind(connection: Connection): void {
    this.#connection = connection;
    this.#watchClose(connection);
    for (const handlers of this.#handlers) this.#registrations.set(handlers, this.#register(handlers));
    if (this.#registration) {
      this.#registration = undefined;
      this.#listen();
    }
  }

  #reattachHost(): ReattachHost {
    return {
      bind: (connection) => this.#bind(connection),
      initializeAgain: () => {
        const version = this.protocolVersion;
        return this.initialize({ ...this.#initialized, ...(version === undefined ? {} : { protocolVersion: version }) });
      },
      request: (method, params) => this.#connection.sendRequest(method, params),
    };
  }

  /**
   * Stops re-attaching (a fallback under way gives up) and closes the current connection. Without
   * {@link AcpClientOptions.reattach}, the same as `client.connection.close()`.
   */
  close(): Promise<void> {
    this.#reattacher?.stop();
    return this.#connection.close();
  }

  /** {@link AcpClient.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** The connection this client sends on. */
  get connection(): Connection {
    return this.#connection;
  }

  /** The negotiated protocol version, once `initialize` succeeded. */
  get protocolVersion(): AcpVersion | undefined {
    return negotiatedVersion(this.#connection) as AcpVersion | undefined;
  }

  /** The agent as the last successful {@link AcpClient.initialize} described it, or `undefined`. */
  get agent(): AgentInitialization | undefined {
    return this.#agent;
  }

  /**
   * Sends `initialize`, offering the highest version the client speaks, and keeps the negotiated
   * version.
   *
   * @remarks An offer of 2 carries v2's `info`/`capabilities` and, for an agent that only speaks
   * v1, v1's `clientInfo`/`clientCapabilities` too (each version's schema allows the other's
   * fields). A failed `initialize` leaves the previous state in place; the agent lets the client retry.
   * @returns resolves with the agent's description; rejects with the agent's `RpcError` (e.g.
   * `-32022` with `data` `{requested, supported}`), `UnsupportedProtocolVersionError` when the agent
   * answers a version the client does not speak (the connection is not closed), or `ConnectionClosedError`
   * @throws TypeError or RangeError for an invalid option
   */
  async initialize(params: ClientInitializeParams = {}, options: SendRequestOptions = {}): Promise<AgentInitialization> {
    const offered = params.protocolVersion ?? Math.max(...this.#supported);
    const sent = this.#initializeParams(offered, params);
    const result = await this.#connection.sendRequest<JsonObject>(INITIALIZE_METHOD, sent, options);
    const version = acceptProtocolVersion(result?.protocolVersion, offered, this.#supported) as AcpVersion;
    recordNegotiatedVersion(this.#connection, version);
    this.#initialized = params;
    this.#agent = describeAgent(version, result);
    return this.#agent;
  }

  #initializeParams(offered: number, params: ClientInitializeParams): Record<string, unknown> {
    const { protocolVersion: _offer, info = this.#info, capabilities, clientCapabilities, ...rest } = params;
    const v1Capabilities = clientCapabilities ?? clientCapabilitiesOf(this.#handlers);
    if (offered < 2) return { protocolVersion: offered, clientInfo: info, clientCapabilities: v1Capabilities, ...rest };
    const v1 = this.#supported.includes(1) ? { clientInfo: info, clientCapabilities: v1Capabilities } : {};
    return { protocolVersion: offered, info, capabilities: capabilities ?? clientV2CapabilitiesOf(this.#handlers), ...v1, ...rest };
  }

  /**
   * Authenticates with one of the agent's `authMethods`: v1 `authenticate`, v2 `auth/login`.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  authenticate(methodId: string, options: SendRequestOptions = {}): SentRequest<JsonObject> {
    const method = this.protocolVersion === 2 ? AUTH_LOGIN_METHOD : AUTHENTICATE_METHOD;
    return this.#connection.sendRequest<JsonObject>(method, { methodId }, options);
  }

  /**
   * Sends `session/new` (`mcpServers` defaults to `[]`, which both versions accept).
   *
   * @throws TypeError or RangeError for an invalid option
   */
  newSession(params: NewSessionParams, options: SendRequestOptions = {}): SentRequest<V1.NewSessionResponse | V2.NewSessionResponse> {
    const sent = { ...params, mcpServers: params.mcpServers ?? [] } as JsonObject;
    const request = this.#connection.sendRequest<V1.NewSessionResponse | V2.NewSessionResponse>(SESSION_NEW_METHOD, sent, options);
    const reattacher = this.#reattacher;
    if (reattacher) request.then((result) => reattacher.track(result?.sessionId, sent), noop);
    return request;
  }

  /**
   * Sends `session/close` (ACP v2; v1 agents that advertise `sessionCapabilities.close`): the agent
   * ends the session. The client forgets it at once: it is never re-attached.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  closeSession(sessionId: string, options: SendRequestOptions = {}): SentRequest<JsonObject> {
    this.#reattacher?.forget(sessionId);
    return this.#connection.sendRequest<JsonObject>(SESSION_CLOSE_METHOD, { sessionId }, options);
  }

  /**
   * Sends `session/list` (v2; v1 agents with `sessionCapabilities.list`): one page of the sessions
   * the agent knows; pass its `nextCursor` back as `cursor` for the next.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  listSessions(
    params: ListSessionsParams = {},
    options: SendRequestOptions = {},
  ): SentRequest<V1.ListSessionsResponse | V2.ListSessionsResponse> {
    return this.#connection.sendRequest(SESSION_LIST_METHOD, params, options);
  }

  /**
   * Sends `session/resume` (v2; v1 agents with `sessionCapabilities.resume`): the session takes
   * prompts on this connection again. In v2 the agent sends the session's state (and with
   * `replayFrom: {type: "start"}` its conversation) before the answer.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  resumeSession(
    params: ResumeSessionParams,
    options: SendRequestOptions = {},
  ): SentRequest<V1.ResumeSessionResponse | V2.ResumeSessionResponse> {
    return this.#attach(SESSION_RESUME_METHOD, params, options);
  }

  /**
   * Sends v1 `session/load` (agents with `loadSession`): the agent replays the conversation as
   * `session/update`s, then answers; the session takes prompts on this connection again.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  loadSession(params: ResumeSessionParams, options: SendRequestOptions = {}): SentRequest<V1.LoadSessionResponse> {
    return this.#attach(SESSION_LOAD_METHOD, params, options);
  }

  #attach<R>(method: string, params: ResumeSessionParams, options: SendRequestOptions): SentRequest<R> {
    const sent = { ...params, mcpServers: params.mcpServers ?? [] } as JsonObject;
    const request = this.#connection.sendRequest<R>(method, sent, options);
    const reattacher = this.#reattacher;
    if (reattacher) request.then(() => reattacher.track(params.sessionId, sent), noop);
    return request;
  }

  /**
   * Sends `session/delete` (agents that advertise it): the agent forgets the session; it is no
   * longer listed. The client forgets it too.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  deleteSession(sessionId: string, options: SendRequestOptions = {}): SentRequest<JsonObject> {
    this.#reattacher?.forget(sessionId);
    return this.#connection.sendRequest<JsonObject>(SESSION_DELETE_METHOD, { sessionId }, options);
  }

  /**
   * Sends `session/set_config_option`; resolves with the session's whole list of config options.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  setConfigOption(
    params: SetConfigOptionParams,
    options: SendRequestOptions = {},
  ): SentRequest<V1.SetSessionConfigOptionResponse | V2.SetSessionConfigOptionResponse> {
    return this.#connection.sendRequest(SESSION_SET_CONFIG_OPTION_METHOD, params, options);
  }

  /**
   * Sends v1 `session/set_mode` (v2 has config options instead).
   *
   * @throws TypeError or RangeError for an invalid option
   */
  setMode(sessionId: string, modeId: string, options: SendRequestOptions = {}): SentRequest<V1.SetSessionModeResponse> {
    return this.#connection.sendRequest(SESSION_SET_MODE_METHOD, { sessionId, modeId }, options);
  }

  /**
   * Logs out: v1 `logout`, v2 `auth/logout`.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  logout(options: SendRequestOptions = {}): SentRequest<JsonObject> {
    return this.#connection.sendRequest<JsonObject>(this.protocolVersion === 2 ? AUTH_LOGOUT_METHOD : LOGOUT_METHOD, {}, options);
  }

  /**
   * Sends v2 `tool_call/cancel` for a tool call that advertises `capabilities.cancel`; its final
   * `tool_call_update` confirms it.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  cancelToolCall(sessionId: string, toolCallId: string, options: SendRequestOptions = {}): SentRequest<JsonObject> {
    return this.#connection.sendRequest<JsonObject>(TOOL_CALL_CANCEL_METHOD, { sessionId, toolCallId }, options);
  }

  /**
   * Sends v2 `terminal/cancel` for a terminal that advertises `capabilities.cancel`; its
   * `terminal_update` with an exit status confirms it.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  cancelTerminal(sessionId: string, terminalId: string, options: SendRequestOptions = {}): SentRequest<JsonObject> {
    return this.#connection.sendRequest<JsonObject>(TERMINAL_CANCEL_METHOD, { sessionId, terminalId }, options);
  }

  /**
   * Sends `session/prompt` and returns the turn: await it for its stop reason, iterate it for its
   * updates, `cancel()` it (`session/cancel`). See {@link PromptTurn}.
   *
   * @remarks An `options.signal` already aborted still sends the prompt, then `session/cancel`.
   */
  prompt(params: PromptParams, options: PromptOptions = {}): PromptTurn {
    this.#listen();
    const request = this.#connection.sendRequest<V1.PromptResponse | V2.PromptResponse>(SESSION_PROMPT_METHOD, params);
    const host = {
      cancelSession: (sessionId: string) => this.cancelSession(sessionId),
      ended: (turn: PromptTurn) => {
        this.#turns.delete(turn);
        this.#unlistenIfIdle();
      },
    };
    const turn = new PromptTurn(host, params.sessionId, request, this.protocolVersion, options);
    if (!turn.isDone) this.#turns.add(turn);
    return turn;
  }

  /**
   * Sends the `session/cancel` notification: the agent stops the session's running turn, which
   * ends `cancelled`. Pending `session/request_permission` requests of the session are answered
   * `cancelled` at once.
   *
   * @remarks Does not cancel any request: a pending `session/prompt` is answered as its version says.
   * @throws ConnectionClosedError if the connection is closed
   */
  cancelSession(sessionId: string, meta?: JsonObject): void {
    const params: JsonObject = meta === undefined ? { sessionId } : { sessionId, _meta: meta };
    this.#connection.sendNotification(SESSION_CANCEL_METHOD, params);
    this.#permissions.cancel(sessionId);
  }

  /**
   * Answers what the agent asks of the client (permissions; v1 files and terminals). Call it
   * before {@link AcpClient.initialize}: the v1 capabilities sent there are the handlers' ones.
   *
   * @returns a disposable that removes these handlers
   * @throws TypeError if a handler is not a function
   */
  handle(handlers: AcpClientHandlers): Disposable {
    this.#registrations.set(handlers, this.#register(handlers));
    this.#handlers.push(handlers);
    return toDisposable(() => {
      this.#registrations.get(handlers)?.dispose();
      this.#registrations.delete(handlers);
      this.#handlers.splice(this.#handlers.indexOf(handlers), 1);
    });
  }

  #register(handlers: AcpClientHandlers): Disposable {
    return registerClientHandlers(this.#connection, handlers, () => this.protocolVersion, this.#permissions);
  }

  /**
   * Calls `handler` for every `session/update` notification (of one session, with `sessionId`).
   *
   * @remarks Handlers run in arrival order, synchronously as each notification is decoded. When
   * one throws, the others still run and the first error is reported on the connection.
   * @returns a disposable that stops the delivery to this handler
   * @throws TypeError if `handler` is not a function
   */
  onSessionUpdate(handler: SessionUpdateHandler, options: SessionUpdateOptions = {}): Disposable {
    if (typeof handler !== 'function') throw new TypeError('handler must be a function');
    const subscription: Subscription = { handler, sessionId: options.sessionId };
    this.#subscriptions.add(subscription);
    this.#listen();
    return toDisposable(() => {
      this.#subscriptions.delete(subscription);
      this.#unlistenIfIdle();
    });
  }

  #listen(): void {
    this.#registration ??= this.#connection.onNotification(SESSION_UPDATE_METHOD, (params: JsonValue) => this.#deliver(params));
  }

  #unlistenIfIdle(): void {
    if (this.#subscriptions.size > 0 || this.#turns.size > 0) return;
    this.#registration?.dispose();
    this.#registration = undefined;
  }

  #deliver(params: JsonValue): void {
    if (!isSessionUpdate(params)) throw new TypeError(`malformed ${SESSION_UPDATE_METHOD} params: ${JSON.stringify(params)}`);
    let failure: { error: unknown } | undefined;
    const run = (fn: () => void): void => {
      try {
        fn();
      } catch (error) {
        failure ??= { error };
      }
    };
    for (const turn of [...this.#turns]) if (turn.sessionId === params.sessionId) run(() => turn.accept(params));
    for (const { handler, sessionId } of [...this.#subscriptions]) {
      if (sessionId === undefined || sessionId === params.sessionId) run(() => handler(params));
    }
    if (failure) throw failure.error;
  }
}

function noop(): void {}
