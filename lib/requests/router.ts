/**
 * The method → handler table of a connection, with a fallback for any method.
 *
 * @packageDocumentation
 */
import { toDisposable, type Disposable } from '../support/disposable';
import type { NotificationMessage } from '../jsonrpc/message';
import type { Responder } from './responder';

/**
 * Handles one received request.
 *
 * @remarks
 * Answer through the responder, or return a value (a promise resolving to a value works too) to
 * answer with it. Throwing or rejecting answers with the error (an `RpcError` as is, anything else
 * `-32603`). Returning `undefined` without answering leaves the responder in charge: keep it to
 * answer later, or drop it and the library answers automatically. To answer `null`, return `null`.
 * `P` is the params type the handler expects; params are not validated against it (as with
 * `JSON.parse`): check them when the peer is not trusted.
 */
export type RequestHandler<P = unknown, R = unknown> = (params: P, responder: Responder<R>) => unknown;

/**
 * Handles one received notification. Its return value is ignored; a throw or rejection is reported
 * as a `NotificationHandlerError` on the connection's `'warning'` event and never sent.
 */
export type NotificationHandler<P = unknown> = (params: P, message: NotificationMessage) => unknown;

/**
 * A table of handlers by method, with one optional fallback for each kind.
 *
 * @remarks Backed by `Map`s, so no method name (`constructor`, `__proto__`…) reaches the object
 * prototype. Registering a method again replaces the handler; the older registration's disposable
 * then does nothing.
 */
export class Router {
  readonly #requests = new Map<string, RequestHandler>();
  readonly #notifications = new Map<string, NotificationHandler>();
  #requestFallback: RequestHandler | undefined;
  #notificationFallback: NotificationHandler | undefined;

  /** Registers the handler of requests named `method`. */
  onRequest(method: string, handler: RequestHandler): Disposable {
    return register(this.#requests, checkMethod(method), checkHandler(handler));
  }

  /** Registers the handler of notifications named `method`. */
  onNotification(method: string, handler: NotificationHandler): Disposable {
    return register(this.#notifications, checkMethod(method), checkHandler(handler));
  }

  /** Registers the handler of every request no method handler claims (read `responder.method`). */
  onAnyRequest(handler: RequestHandler): Disposable {
    this.#requestFallback = checkHandler(handler);
    return toDisposable(() => {
      if (this.#requestFallback === handler) this.#requestFallback = undefined;
    });
  }

  /** Registers the handler of every notification no method handler claims (read `message.method`). */
  onAnyNotification(handler: NotificationHandler): Disposable {
    this.#notificationFallback = checkHandler(handler);
    return toDisposable(() => {
      if (this.#notificationFallback === handler) this.#notificationFallback = undefined;
    });
  }

  /** The handler for a request, or `undefined`. */
  requestHandler(method: string): RequestHandler | undefined {
    return this.#requests.get(method) ?? this.#requestFallback;
  }

  /** The handler for a notification, or `undefined`. */
  notificationHandler(method: string): NotificationHandler | undefined {
    return this.#notifications.get(method) ?? this.#notificationFallback;
  }
}

function register<H>(table: Map<string, H>, method: string, handler: H): Disposable {
  table.set(method, handler);
  return toDisposable(() => {
    if (table.get(method) === handler) table.delete(method);
  });
}

/** Returns `method`, or throws when it is not a string. @throws TypeError naming the argument. @internal */
export function checkMethod(method: string): string {
  if (typeof method !== 'string') throw new TypeError('method must be a string');
  return method;
}

function checkHandler<H>(handler: H): H {
  if (typeof handler !== 'function') throw new TypeError('handler must be a function');
  return handler;
}
