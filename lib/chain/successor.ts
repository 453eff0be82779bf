/**
 * The `proxy/successor` envelope of ACP proxy chains: wrapping, unwrapping, and a target that sends
 * every message to a proxy's successor inside it.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { isParams, type JsonObject, type Params } from '../jsonrpc/message';
import { PROXY_SUCCESSOR_METHOD, isSuccessorEnvelope } from '../jsonrpc/protocol';
import type { SendRequestOptions, SentRequest } from '../requests/sent-request';

/**
 * The `params` of a `proxy/successor` envelope: the inner message's `method` and `params`, and an
 * optional `_meta` that belongs to the envelope.
 */
export interface SuccessorEnvelope {
  /** The inner message's method. */
  method: string;
  /** The inner message's params; absent when the inner message has none. */
  params?: Params;
  /** Metadata of the envelope itself (not of the inner message). */
  _meta?: JsonObject;
}

/**
 * Somewhere a message can be sent: a {@link Connection} (plain), or {@link successorTarget} (inside
 * the envelope).
 */
export interface MessageTarget {
  /** Sends a request (with `Connection.sendRequest`'s options); the returned request is not consumed yet. */
  sendRequest(method: string, params?: unknown, options?: SendRequestOptions): SentRequest<unknown>;
  /** Sends a notification. */
  sendNotification(method: string, params?: unknown): void;
}

/**
 * Builds the params of a `proxy/successor` envelope around one message.
 *
 * @remarks `params` is omitted when `undefined`; `_meta` is added beside the inner fields when given.
 * @example
 * ```ts
 * connection.sendRequest(PROXY_SUCCESSOR_METHOD, wrapSuccessor('session/new', { cwd: '/', mcpServers: [] }));
 * ```
 */
export function wrapSuccessor(method: string, params?: unknown, meta?: JsonObject): SuccessorEnvelope {
  const envelope: SuccessorEnvelope = { method };
  if (params !== undefined) envelope.params = params as Params;
  if (meta !== undefined) envelope._meta = meta;
  return envelope;
}

/**
 * Reads the params of a received `proxy/successor` (or `_proxy/successor`) envelope.
 *
 * @remarks
 * Returns `undefined` for a malformed envelope: params that are not an object, a `method` that is
 * not a string, inner `params` that are neither an object nor an array, or a `_meta` that is not an
 * object. A malformed envelope is never unwrapped: it reaches handlers unchanged.
 */
export function unwrapSuccessor(params: unknown): SuccessorEnvelope | undefined {
  if (!isPlainObject(params) || typeof params.method !== 'string') return undefined;
  if (Object.hasOwn(params, 'params') && !isParams(params.params)) return undefined;
  if (Object.hasOwn(params, '_meta') && !isPlainObject(params._meta)) return undefined;
  return params as unknown as SuccessorEnvelope;
}

/**
 * The innermost message inside any number of well-formed successor envelopes (the message itself
 * when it is not an envelope).
 *
 * @remarks Unwrapping stops at the first malformed envelope, which is returned as is.
 */
export function innermostMessage(
  method: string,
  params: unknown,
): {
  /** The innermost method. */
  method: string;
  /** The innermost params. */
  params: unknown;
} {
  let current = { method, params };
  while (isSuccessorEnvelope(current.method)) {
    const inner = unwrapSuccessor(current.params);
    if (!inner) break;
    current = { method: inner.method, params: inner.params };
  }
  return current;
}

/**
 * A target that sends every message inside a `proxy/successor` envelope on `connection`: what a
 * proxy uses to talk to its successor through the conductor.
 *
 * @remarks
 * Requests go out as `proxy/successor` requests, so the returned {@link SentRequest} is the
 * envelope request: its `cancel()` sends a plain `$/cancel_request` naming the envelope request's id
 * on `connection`, as the wire contract requires. The answer to the envelope is the inner request's
 * answer. Does not wrap twice: it sends what it is given inside exactly one envelope.
 * @example
 * ```ts
 * const successor = successorTarget(connection);
 * const answer = await successor.sendRequest('session/new', { cwd: '/', mcpServers: [] });
 * ```
 */
export function successorTarget(connection: Connection): MessageTarget {
  return {
    sendRequest: (method, params, options) => connection.sendRequest(PROXY_SUCCESSOR_METHOD, wrapSuccessor(method, params), options),
    sendNotification: (method, params) => connection.sendNotification(PROXY_SUCCESSOR_METHOD, wrapSuccessor(method, params)),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
