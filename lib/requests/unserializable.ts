/**
 * A received value that cannot be serialized again: what a hop that forwards it answers instead.
 *
 * @packageDocumentation
 */
import { RpcError, SerializationError, describeThrown } from '../jsonrpc/errors';
import type { InboundRequest } from './inbound-request';
import type { ErrorObject, JsonValue } from '../jsonrpc/message';

/**
 * Which forwarded message could not be serialized: a response (`unserializable_response`) or the
 * params of a request (`unserializable_request`).
 *
 * @internal
 */
export type UnserializableReason = 'unserializable_response' | 'unserializable_request';

/**
 * The `-32603` a hop answers when it cannot serialize what it was asked to forward:
 * `{"reason":"unserializable_response" | "unserializable_request","method":<method>,"cause":<why>}`.
 *
 * @remarks `JSON.parse` accepts any nesting but `JSON.stringify` overflows the stack past a few
 * thousand levels, so a peer can send a value no other connection can carry; `cause` says why
 * (e.g. `RangeError: Maximum call stack size exceeded`).
 * @internal
 */
export function unserializableError(reason: UnserializableReason, method: string, error: SerializationError): ErrorObject {
  const cause = describeThrown(error.cause ?? error);
  return RpcError.internalError({ reason, method, cause }).toJSON();
}

/**
 * Delivers a forwarded answer to the upstream request; an answer that cannot be serialized for the
 * upstream connection is replaced by {@link unserializableError}.
 *
 * @remarks Called from the input stream's handler of the downstream connection: it must not throw
 * a serialization failure there (that would crash the forwarding process and leave upstream
 * unanswered).
 * @internal
 */
export function deliverForwarded(upstream: InboundRequest, result: JsonValue | undefined, error: ErrorObject | undefined): void {
  try {
    upstream.deliver(result, error);
  } catch (thrown) {
    if (!(thrown instanceof SerializationError)) throw thrown;
    upstream.deliver(undefined, unserializableError('unserializable_response', upstream.method, thrown));
  }
}
