/**
 * Generic forwarding of one received message to the next hop of a proxy chain.
 *
 * @packageDocumentation
 */
import { ConnectionClosedError, ForwardingError, SerializationError, describeThrown } from '../jsonrpc/errors';
import type { NotificationMessage } from '../jsonrpc/message';
import { cancelTargetOf } from '../jsonrpc/protocol';
import { Responder } from '../requests/responder';
import type { SentRequest } from '../requests/sent-request';
import { hasTracerProvider, withChildSpan } from '../trace/context';
import type * as OtelModule from '../trace/otel';
import { unserializableError } from '../requests/unserializable';
import type { MessageTarget } from './successor';

/**
 * Forwards one received message to `peer`, as a fallback handler receives it.
 *
 * @remarks
 * - A request (`origin` is its {@link Responder}) is sent to `peer` with a new id allocated there,
 *   and answered with `SentRequest.forwardResponseTo`: the downstream answer (data or error) becomes
 *   the upstream answer, an upstream `$/cancel_request` is re-issued downstream at most once with the
 *   downstream id, and if `peer`'s connection closes first the upstream request is answered `-32603`
 *   with data `{"reason":"incoming_transport_closed","method"}`.
 * - A received value that cannot be serialized again (`JSON.parse` reads any nesting,
 *   `JSON.stringify` overflows the stack past a few thousand levels) never throws out of here: a
 *   request whose params cannot be written is answered `-32603` with data
 *   `{"reason":"unserializable_request","method","cause"}`, a downstream answer that cannot be
 *   written upstream is replaced by `-32603` `{"reason":"unserializable_response","method","cause"}`.
 * - A notification (`origin` is the received message) is sent on unchanged. A notification to a
 *   peer whose connection is closed is dropped: there is nobody to deliver it to.
 * - W3C trace context in `params._meta` goes on as a child span: a valid `traceparent` is sent
 *   with the same trace id and flags and a new parent id (the id of this hop's span);
 *   `tracestate` and `baggage` go on unchanged. When `@opentelemetry/api` is installed and a
 *   tracer provider records, a forwarded request gets a span (its id is the new parent id, and an
 *   object `params` gets a `traceparent` even if it had none). Other params are sent unchanged.
 * - A raw `$/cancel_request` — plain, or wrapped in any number of `proxy/successor` envelopes — is
 *   dropped, never tunnelled: its `requestId` means nothing on the next connection. The receiving
 *   connection has already marked the named request cancelled, and a request forwarded by this
 *   function re-issues the cancel with the next hop's id.
 *
 * `method` defaults to the origin's method; pass the inner method when forwarding the content of an
 * envelope (`responder.method` is then the envelope's). Returns nothing, so a handler can return
 * its call: the responder is handed off, no automatic answer is sent.
 * @throws AlreadyAnsweredError if the responder was already answered or handed off
 * @throws ForwardingError if a notification's params cannot be serialized (nothing is sent; a
 * connection reports a notification handler's throw as a `'warning'` and goes on)
 * @example
 * ```ts
 * upstream.onAnyRequest((params, responder) => sendProxiedMessageTo(downstream, params, responder));
 * upstream.onAnyNotification((params, message) => sendProxiedMessageTo(downstream, params, message));
 * ```
 */
export function sendProxiedMessageTo(
  peer: MessageTarget,
  params: unknown,
  origin: Responder<never> | NotificationMessage,
  method: string = origin.method,
): void {
  if (origin instanceof Responder) {
    const span = hasTracerProvider() ? startRequestSpan(method, params, origin) : undefined;
    let sent: SentRequest<unknown>;
    try {
      sent = peer.sendRequest(method, span ? span.params : withChildSpan(params));
      sent.forwardResponseTo(origin);
    } catch (error) {
      span?.fail(error);
      if (!(error instanceof SerializationError)) throw error;
      origin.respondWithError(unserializableError('unserializable_request', method, error));
      return;
    }
    span?.watch(sent, origin);
    return;
  }
  if (isCancelNotification(method, params)) return;
  try {
    peer.sendNotification(method, withChildSpan(params));
  } catch (error) {
    if (error instanceof ConnectionClosedError) return;
    if (!(error instanceof SerializationError)) throw error;
    const cause = describeThrown(error.cause ?? error);
    throw new ForwardingError(method, `the notification \`${method}\` was not forwarded: its params cannot be serialized (${cause})`, {
      cause: error,
    });
  }
}

/** The bridge to `@opentelemetry/api`, loaded when a tracer provider is registered. */
function startRequestSpan(...args: Parameters<typeof OtelModule.startRequestSpan>): OtelModule.RequestSpan | undefined {
  return (require('../trace/otel') as typeof OtelModule).startRequestSpan(...args);
}

/**
 * Whether a notification is a `$/cancel_request`, plain or wrapped in any number of successor
 * envelopes.
 *
 * @remarks Unwraps as leniently as the connection does when it honours a wrapped cancel (any object
 * params), so nothing the connection treated as a cancel is ever forwarded.
 */
export function isCancelNotification(method: string, params: unknown): boolean {
  return cancelTargetOf(method, params) !== undefined;
}
