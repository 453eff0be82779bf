/**
 * The proxy role of an ACP proxy chain: a component that sits between a client and an agent,
 * talks only to the conductor, and forwards whatever it does not handle.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { toDisposable, type Disposable } from '../support/disposable';
import { briefly, logLazily } from '../support/logger';
import { RpcError } from '../jsonrpc/errors';
import type { NotificationMessage } from '../jsonrpc/message';
import {
  INITIALIZE_METHOD,
  LEGACY_PROXY_INITIALIZE_METHOD,
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_INITIALIZE_METHOD,
  PROXY_SUCCESSOR_METHOD,
} from '../jsonrpc/protocol';
import type { Responder } from '../requests/responder';
import { Router, type NotificationHandler, type RequestHandler } from '../requests/router';
import { sendProxiedMessageTo } from './forwarding';
import { InitializeGate, type InitializeState } from '../acp/initialize';
import { successorTarget, unwrapSuccessor, type MessageTarget } from './successor';
import type { McpProvider } from '../mcp/provider';
import { MCP_MESSAGE_METHOD, parseMcpEnvelope } from '../mcp/protocol';

/**
 * Handles one request that came from the proxy's successor, unwrapped from its envelope.
 *
 * @remarks
 * Same contract as a {@link RequestHandler}: return a value to answer with it, throw to answer
 * with the error, or return `undefined` and keep the responder. `method` is the inner method;
 * `responder.method` is the envelope's (`proxy/successor`).
 */
export type SuccessorRequestHandler<P = unknown, R = unknown> = (params: P, responder: Responder<R>, method: string) => unknown;

/**
 * Turns a {@link Connection} to the conductor into an ACP proxy that forwards everything it does not
 * handle.
 *
 * @remarks
 * - Messages from the client direction arrive plain. Unhandled ones go to the successor inside a
 *   `proxy/successor` envelope, with {@link sendProxiedMessageTo}: new id, answer forwarded,
 *   cancellation re-issued hop by hop.
 * - Messages from the successor arrive in a `proxy/successor` (or `_proxy/successor`) envelope.
 *   Unhandled ones are unwrapped and sent to the client direction plain, the same way.
 * - `proxy/initialize` (or `_proxy/initialize`) is forwarded to the successor as `initialize` unless
 *   {@link ProxyComponent.onInitialize} replaces that. A plain `initialize` is refused `-32600`, and
 *   so is any other request before the proxy is initialized (an {@link InitializeGate}).
 * - A raw `$/cancel_request` is never forwarded. The connection marks the named request cancelled
 *   first; then a handler registered for `$/cancel_request` (client side, or successor side for a
 *   wrapped one) sees the notification, and may route it itself.
 * - A malformed envelope is not unwrapped: it reaches the successor-side handler registered for the
 *   envelope's own method name, or the successor-side fallback, unchanged. Without either, a
 *   malformed envelope request is answered `-32602` and a notification is ignored.
 *
 * Do not register `proxy/successor` or `proxy/initialize` handlers on the connection yourself, or
 * replace its `onAnyRequest`/`onAnyNotification` fallbacks: they are the proxy's routing.
 *
 * @example
 * ```ts
 * const proxy = new ProxyComponent(connectStdio());
 * proxy.onClientRequest('session/prompt', (params, responder) => {
 *   proxy.successor.sendRequest('session/prompt', addContext(params)).forwardResponseTo(responder);
 * });
 * ```
 */
export class ProxyComponent {
  /** The connection to the conductor. */
  readonly connection: Connection;
  /** Sends to the successor: every message goes inside a `proxy/successor` envelope. */
  readonly successor: MessageTarget;
  readonly #fromSuccessor = new Router();
  readonly #gate: InitializeGate;
  #initialize: RequestHandler;

  /** Installs the proxy's routing on `connection` (and an {@link InitializeGate}). */
  constructor(connection: Connection) {
    this.connection = connection;
    this.successor = successorTarget(connection);
    this.#gate = new InitializeGate(connection, {
      methods: [PROXY_INITIALIZE_METHOD, LEGACY_PROXY_INITIALIZE_METHOD],
      refuse: [INITIALIZE_METHOD],
    });
    this.#initialize = this.#forwardInitialize;
    for (const method of [PROXY_INITIALIZE_METHOD, LEGACY_PROXY_INITIALIZE_METHOD]) {
      connection.onRequest(method, (params, responder) => this.#initialize(params, responder));
    }
    for (const method of [PROXY_SUCCESSOR_METHOD, LEGACY_PROXY_SUCCESSOR_METHOD]) {
      connection.onRequest(method, (params, responder) => this.#fromSuccessorRequest(params, responder));
      connection.onNotification(method, (params, message) => this.#fromSuccessorNotification(params, message));
    }
    connection.onAnyRequest((params, responder) => sendProxiedMessageTo(this.successor, params, responder));
    connection.onAnyNotification((params, message) => sendProxiedMessageTo(this.successor, params, message));
  }

  /** Sends to the client direction: plain messages on the connection. */
  get client(): MessageTarget {
    return this.connection;
  }

  /** Where the proxy is in its `proxy/initialize` handshake. */
  get initializeState(): InitializeState {
    return this.#gate.state;
  }

  /**
   * Handles `proxy/initialize` (and `_proxy/initialize`) instead of forwarding it to the successor
   * as `initialize`.
   *
   * @remarks Disposing restores the default forwarding.
   */
  onInitialize(handler: RequestHandler): Disposable {
    this.#initialize = handler;
    return toDisposable(() => {
      if (this.#initialize === handler) this.#initialize = this.#forwardInitialize;
    });
  }

  /** Handles requests named `method` from the client direction (they are then not forwarded). */
  onClientRequest<P = unknown, R = unknown>(method: string, handler: RequestHandler<P, R>): Disposable {
    return this.connection.onRequest(method, handler);
  }

  /** Handles notifications named `method` from the client direction (they are then not forwarded). */
  onClientNotification<P = unknown>(method: string, handler: NotificationHandler<P>): Disposable {
    return this.connection.onNotification(method, handler);
  }

  /** Handles requests named `method` from the successor, unwrapped (they are then not forwarded). */
  onSuccessorRequest<P = unknown, R = unknown>(method: string, handler: SuccessorRequestHandler<P, R>): Disposable {
    return this.#fromSuccessor.onRequest(method, handler as RequestHandler);
  }

  /** Handles notifications named `method` from the successor, unwrapped (they are then not forwarded). */
  onSuccessorNotification<P = unknown>(method: string, handler: NotificationHandler<P>): Disposable {
    return this.#fromSuccessor.onNotification(method, handler as NotificationHandler);
  }

  /** Handles every request from the successor that no method handler claims, instead of forwarding it. */
  onAnySuccessorRequest(handler: SuccessorRequestHandler): Disposable {
    return this.#fromSuccessor.onAnyRequest(handler as RequestHandler);
  }

  /** Handles every notification from the successor that no method handler claims, instead of forwarding it. */
  onAnySuccessorNotification(handler: NotificationHandler): Disposable {
    return this.#fromSuccessor.onAnyNotification(handler);
  }

  /**
   * Answers the `mcp/message` requests from the successor that name one of `provider`'s servers,
   * and forwards every other one to the client direction unchanged (only the hop's id changes):
   * the MCP servers this proxy gives the agent. Their notifications go to the successor.
   *
   * @returns the registration (dispose it to forward every `mcp/message` again)
   */
  serveMcp(provider: McpProvider): Disposable {
    return this.onSuccessorRequest(MCP_MESSAGE_METHOD, (params, responder) => {
      const envelope = parseMcpEnvelope(params);
      const answer = envelope && provider.answer(envelope, responder, this.successor);
      return answer ?? sendProxiedMessageTo(this.client, params, responder, MCP_MESSAGE_METHOD);
    });
  }

  readonly #forwardInitialize: RequestHandler = (params, responder) =>
    sendProxiedMessageTo(this.successor, params, responder, INITIALIZE_METHOD);

  #fromSuccessorRequest(params: unknown, responder: Responder): unknown {
    const inner = unwrapSuccessor(params);
    const method = inner ? inner.method : responder.method;
    const handler = this.#fromSuccessor.requestHandler(method) as SuccessorRequestHandler | undefined;
    if (handler) return handler(inner ? inner.params : params, responder, method);
    if (!inner) throw RpcError.invalidParams(`malformed \`${responder.method}\` envelope`);
    return sendProxiedMessageTo(this.client, inner.params, responder, inner.method);
  }

  #fromSuccessorNotification(params: unknown, message: NotificationMessage): unknown {
    const inner = unwrapSuccessor(params);
    const innerMessage: NotificationMessage = !inner
      ? message
      : inner.params === undefined
        ? { jsonrpc: '2.0', method: inner.method }
        : { jsonrpc: '2.0', method: inner.method, params: inner.params };
    const handler = this.#fromSuccessor.notificationHandler(innerMessage.method);
    if (handler) return handler(innerMessage.params, innerMessage);
    if (!inner) {
      logLazily(this.connection.logger, 'warn', () => `ignored a malformed ${briefly(message.method)} envelope: ${briefly(params)}`);
      return undefined;
    }
    return sendProxiedMessageTo(this.client, innerMessage.params, innerMessage);
  }
}
