/**
 * The messages a connection writes, byte for byte (see the wire contract): members in the order
 * `jsonrpc`, `id`, `method`, `params`, or `jsonrpc`, `id`, `result`/`error`. Each is its JSON text
 * without the newline: the connection's writer ends the line (see `LineWriter`).
 *
 * @packageDocumentation
 */
import { encodeJson } from './ndjson';
import type { ErrorObject, JsonValue, RequestId } from '../jsonrpc/message';
import { CANCEL_REQUEST_METHOD } from '../jsonrpc/protocol';
import { encodeResponseWithRawId } from './raw-id';

/**
 * A request line; `params` is left out when `undefined`.
 *
 * @throws SerializationError if `params` cannot be serialized
 * @internal
 */
export function requestLine(id: RequestId, method: string, params: unknown): string {
  return params === undefined ? encodeJson({ jsonrpc: '2.0', id, method }) : encodeJson({ jsonrpc: '2.0', id, method, params });
}

/**
 * A notification line; `params` is left out when `undefined`.
 *
 * @throws SerializationError if `params` cannot be serialized
 * @internal
 */
export function notificationLine(method: string, params: unknown): string {
  return params === undefined ? encodeJson({ jsonrpc: '2.0', method }) : encodeJson({ jsonrpc: '2.0', method, params });
}

/** The one `$/cancel_request` line for `id`. @internal */
export function cancelLine(id: RequestId): string {
  return encodeJson({ jsonrpc: '2.0', method: CANCEL_REQUEST_METHOD, params: { requestId: id } });
}

/**
 * A response line: an error when `error` is defined, else a result (`null` for `undefined`). The
 * id is written as `rawId` verbatim when given (the request's own text of an inexact number).
 *
 * @throws SerializationError if the result or error cannot be serialized
 * @internal
 */
export function responseLine(
  id: RequestId,
  rawId: string | undefined,
  result: JsonValue | undefined,
  error: ErrorObject | undefined,
): string {
  if (rawId !== undefined) return encodeResponseWithRawId(rawId, error === undefined ? { result: result ?? null } : { error });
  return error === undefined ? encodeJson({ jsonrpc: '2.0', id, result: result ?? null }) : encodeJson({ jsonrpc: '2.0', id, error });
}
