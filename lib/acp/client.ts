/**
 * A thin client side of ACP over a {@link Connection}: `initialize`, sessions, prompts and their
 * updates. Params and results stay plain JSON; this is a transport library, not a schema package.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection';
import { toDisposable, type Disposable } from '../disposable';
import type { JsonObject, JsonValue } from '../message';
import { INITIALIZE_METHOD } from '../protocol';
import type { SendRequestOptions, SentRequest } from '../sent-request';

/** The ACP protocol version this library speaks by default (ACP v2). */
export const ACP_PROTOCOL_VERSION = 2;

/** ACP's `session/new` request. */
export const SESSION_NEW_METHOD = 'session/new';

/** ACP's `session/prompt` request, answered `{messageId}` once the prompt is inserted. */
export const SESSION_PROMPT_METHOD = 'session/prompt';

/** ACP's `session/cancel` notification: stops a session's running turn. */
export const SESSION_CANCEL_METHOD = 'session/cancel';

/** ACP's `session/update` notification, sent by the agent. */
export const SESSION_UPDATE_METHOD = 'session/update';

/** `initialize` params: `protocolVersion` and `info` are required by ACP v2; anything else passes through. */
export interface InitializeParams extends JsonObject {
  /** The protocol version the client offers. */
  protocolVersion: number;
  /** The client's name and version. */
  info: {
    /** The client's name. */
    name: string;
    /** The client's version. */
    version: string;
  } & JsonObject;
}

/** The agent's `initialize` result: the negotiated `protocolVersion`, its `info` and `capabilities`. */
export interface InitializeResult extends JsonObject {
  /** The protocol version the agent chose. */
  protocolVersion: number;
}

/** `session/new` params (`cwd` is an absolute path). */
export interface NewSessionParams extends JsonObject {
  /** The session's working directory, an absolute path. */
  cwd: string;
}

/** `session/new` result. */
export interface NewSessionResult extends JsonObject {
  /** The new session's id. */
  sessionId: string;
}

/** `session/prompt` params: the session and the prompt's content blocks (at least one). */
export interface PromptParams extends JsonObject {
  /** The session to prompt. */
  sessionId: string;
  /** The prompt's content blocks (at least one). */
  prompt: JsonObject[];
}

/** `session/prompt` result: the id of the inserted user message. */
export interface PromptResult extends JsonObject {
  /** The id of the inserted user message. */
  messageId: string;
}

/** One `session/update` notification: `update.sessionUpdate` names its kind. */
export interface SessionUpdateParams extends JsonObject {
  /** The session the update belongs to. */
  sessionId: string;
  /** The update itself. */
  update: {
    /** The kind of update, e.g. `agent_message_chunk` or `state_update`. */
    sessionUpdate: string;
  } & JsonObject;
}

/** Receives `session/update` notifications. A throw is reported on the connection's `'warning'` event. */
export type SessionUpdateHandler = (params: SessionUpdateParams) => void;

/** Options of {@link AcpClient.onSessionUpdate}. */
export interface SessionUpdateOptions {
  /** Only deliver updates of this session. Default: every session. */
  sessionId?: string;
}

const DEFAULT_INITIALIZE_PARAMS: Readonly<InitializeParams> = Object.freeze({
  protocolVersion: ACP_PROTOCOL_VERSION,
  info: { name: 'acp-wire-client', version: 'unspecified' },
  capabilities: {},
});

interface Subscription {
  readonly handler: SessionUpdateHandler;
  readonly sessionId: string | undefined;
}

/**
 * The client side of an ACP connection: sends `initialize`, `session/new`, `session/prompt` and
 * `session/cancel`, and fans `session/update` notifications out to handlers.
 *
 * @remarks
 * It only adds names and a little state to a {@link Connection}: every request is an ordinary
 * {@link SentRequest} (cancel it, forward it, give it a `signal`), nothing is validated against
 * the ACP schema, and requests are sent as called — the agent, not this class, refuses a request
 * sent before `initialize` completed. It registers the connection's one `session/update` handler
 * while at least one {@link AcpClient.onSessionUpdate} subscription is active (replacing any other
 * handler of that method). It never closes the connection.
 *
 * @example
 * ```ts
 * const { connection, close } = spawnConnection(process.execPath, ['dist/examples/conformance-agent.js']);
 * const client = new AcpClient(connection);
 * await client.initialize();
 * const { sessionId } = await client.newSession({ cwd: process.cwd(), mcpServers: [] });
 * using _ = client.onSessionUpdate(({ update }) => console.log(update.sessionUpdate), { sessionId });
 * const { messageId } = await client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hello' }] });
 * await close();
 * ```
 */
export class AcpClient {
  readonly #connection: Connection;
  readonly #subscriptions = new Set<Subscription>();
  #registration: Disposable | undefined;
  #initializeResult: InitializeResult | undefined;

  /** @throws TypeError if `connection` is missing */
  constructor(connection: Connection) {
    if (!connection || typeof connection.sendRequest !== 'function') throw new TypeError('connection must be a Connection');
    this.#connection = connection;
  }

  /** The connection this client sends on. */
  get connection(): Connection {
    return this.#connection;
  }

  /** The agent's result of the last successful {@link AcpClient.initialize}, or `undefined`. */
  get initializeResult(): InitializeResult | undefined {
    return this.#initializeResult;
  }

  /**
   * Sends `initialize` and keeps the agent's result as {@link AcpClient.initializeResult}.
   *
   * @remarks Missing fields default to `protocolVersion: 2`, `info: {name: "acp-wire-client",
   * version: "unspecified"}` and `capabilities: {}`; other fields pass through unchanged.
   * A failed `initialize` leaves the previous result in place; the agent lets the client retry.
   * The result's `protocolVersion` is not checked: compare it yourself if you support several.
   * @returns resolves with the result; rejects with the agent's `RpcError`, or `ConnectionClosedError`
   * @throws TypeError or RangeError for an invalid option
   */
  async initialize(params: Partial<InitializeParams> = {}, options: SendRequestOptions = {}): Promise<InitializeResult> {
    // `Partial` only makes the two required fields optional; the defaults fill them in.
    const full = { ...DEFAULT_INITIALIZE_PARAMS, ...params } as InitializeParams;
    const result = await this.#connection.sendRequest<InitializeResult>(INITIALIZE_METHOD, full, options);
    this.#initializeResult = result;
    return result;
  }

  /**
   * Sends `session/new`.
   *
   * @throws TypeError or RangeError for an invalid option
   */
  newSession(params: NewSessionParams, options: SendRequestOptions = {}): SentRequest<NewSessionResult> {
    return this.#connection.sendRequest<NewSessionResult>(SESSION_NEW_METHOD, params, options);
  }

  /**
   * Sends `session/prompt`; it resolves `{messageId}` once the agent has inserted the prompt.
   *
   * @remarks
   * Aborting `options.signal` (or `cancel()`) sends `$/cancel_request` for this one request: it
   * wins only before the prompt is inserted (`-32800`); afterwards the answer is still success.
   * To stop the turn's work, use {@link AcpClient.cancelSession}. The turn's output arrives as
   * `session/update` notifications, not in the result.
   * @throws TypeError or RangeError for an invalid option
   */
  prompt(params: PromptParams, options: SendRequestOptions = {}): SentRequest<PromptResult> {
    return this.#connection.sendRequest<PromptResult>(SESSION_PROMPT_METHOD, params, options);
  }

  /**
   * Sends the `session/cancel` notification: the agent stops the running turn and reports
   * `state_update` idle with `stopReason: "cancelled"`.
   *
   * @remarks Does not cancel any request: a pending `session/prompt` is answered as usual.
   * @throws ConnectionClosedError if the connection is closed
   */
  cancelSession(sessionId: string, meta?: JsonObject): void {
    const params: JsonObject = meta === undefined ? { sessionId } : { sessionId, _meta: meta };
    this.#connection.sendNotification(SESSION_CANCEL_METHOD, params);
  }

  /**
   * Calls `handler` for every `session/update` notification (of one session, with `sessionId`).
   *
   * @remarks Handlers run in arrival order, synchronously as each notification is decoded. When
   * one throws, the others still run and the first error is reported on the connection's
   * `'warning'` event (nothing is sent to the agent).
   * @returns a disposable that stops the delivery to this handler
   * @throws TypeError if `handler` is not a function
   */
  onSessionUpdate(handler: SessionUpdateHandler, options: SessionUpdateOptions = {}): Disposable {
    if (typeof handler !== 'function') throw new TypeError('handler must be a function');
    const subscription: Subscription = { handler, sessionId: options.sessionId };
    this.#subscriptions.add(subscription);
    this.#registration ??= this.#connection.onNotification(SESSION_UPDATE_METHOD, (params: JsonValue) => this.#deliver(params));
    return toDisposable(() => {
      this.#subscriptions.delete(subscription);
      if (this.#subscriptions.size > 0) return;
      this.#registration?.dispose();
      this.#registration = undefined;
    });
  }

  #deliver(params: JsonValue): void {
    if (!isSessionUpdate(params)) throw new TypeError(`malformed ${SESSION_UPDATE_METHOD} params: ${JSON.stringify(params)}`);
    let failure: { error: unknown } | undefined;
    for (const { handler, sessionId } of [...this.#subscriptions]) {
      if (sessionId !== undefined && sessionId !== params.sessionId) continue;
      try {
        handler(params);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}


function isSessionUpdate(params: JsonValue): params is SessionUpdateParams {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const { sessionId, update } = params;
  return (
    typeof sessionId === 'string' &&
    typeof update === 'object' &&
    update !== null &&
    !Array.isArray(update) &&
    typeof update.sessionUpdate === 'string'
  );
}
