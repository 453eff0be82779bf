/**
 * The messages a connection writes, byte for byte (see the wire contract): members in the order
 * `jsonrpc`, `id`, `method`, `params`, or `jsonrpc`, `id`, `result`/`error`. Each is its JSON text
 * without the newline: the connection's writer ends the line (see `LineWriter`).
 *
 * @packageDocumentation
 */
import { OPEN_BRACE } from './json-text';
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
 * Where a message's `_meta` entry comes from when its output wants one on every message (see
 * `LineWriter.metaEntry`).
 *
 * @internal
 */
export interface MetaEntrySource {
  /** Takes the entry of the message written next, or `undefined` when none is wanted. */
  metaEntry(): string | undefined;
}

/**
 * The JSON text of a `params`/`result` value with `meta`'s entry first in its `_meta`, when the
 * value serializes to an object with no `_meta` of its own (then the entry is taken); else
 * `undefined` (nothing taken: the output's port puts the entry on the whole message).
 *
 * @throws SerializationError if `value` cannot be serialized
 */
function withMetaEntry(value: unknown, meta: MetaEntrySource): string | undefined {
  // A toJSON method would be called with another key than in the whole message.
  if (typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  const json = encodeJson(value);
  // `"_meta"` also matches a string that is exactly `_meta`: the port's splice then decides.
  if (json.charCodeAt(0) !== OPEN_BRACE || json.includes('"_meta"')) return undefined;
  const entry = meta.metaEntry();
  if (entry === undefined) return json;
  return json.length === 2 ? `{"_meta":{${entry}}}` : `{"_meta":{${entry}},${json.slice(1)}`;
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

/**
 * {@link notificationLine} for an output that wants a `_meta` entry on every message: the entry is
 * written first into `params._meta` where it can be (else the output's port puts it on the line).
 *
 * @throws SerializationError if `params` cannot be serialized
 * @internal
 */
export function notificationLineWithMeta(method: string, params: unknown, meta: MetaEntrySource): string {
  const stamped = params === undefined ? undefined : withMetaEntry(params, meta);
  if (stamped === undefined) return notificationLine(method, params);
  return `{"jsonrpc":"2.0","method":${encodeJson(method)},"params":${stamped}}`;
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

/**
 * {@link responseLine} for an output that wants a `_meta` entry on every message: the entry is
 * written first into `result._meta` where it can be (else the output's port puts it on the line).
 *
 * @throws SerializationError if the result or error cannot be serialized
 * @internal
 */
export function responseLineWithMeta(
  id: RequestId,
  rawId: string | undefined,
  result: JsonValue | undefined,
  error: ErrorObject | undefined,
  meta: MetaEntrySource,
): string {
  const stamped = error === undefined ? withMetaEntry(result, meta) : undefined;
  if (stamped === undefined) return responseLine(id, rawId, result, error);
  return `{"jsonrpc":"2.0","id":${rawId ?? encodeJson(id)},"result":${stamped}}`;
}
