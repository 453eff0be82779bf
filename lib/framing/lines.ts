/**
 * The messages a connection writes, byte for byte (see the wire contract): members in the order
 * `jsonrpc`, `id`, `method`, `params`, or `jsonrpc`, `id`, `result`/`error`. Each is its JSON text
 * without the newline: the connection's writer ends the line (see `LineWriter`).
 *
 * @packageDocumentation
 */
import { OPEN_BRACE, decimalText } from './json-text';
import { encodeJson } from './ndjson';
import type { ErrorObject, JsonValue, RequestId } from '../jsonrpc/message';
import { CANCEL_REQUEST_METHOD } from '../jsonrpc/protocol';
import type { MetaStamp } from './meta-stamp';
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
 * The JSON text of a `params`/`result` value that can take a `_meta` entry first: an object (not
 * an array, no `toJSON` method, no own `_meta`) whose JSON is an object text; else `undefined`
 * (the output's port then puts the entry on the whole message).
 *
 * @remarks An own `_meta` is looked up on the value rather than searched for in its JSON (its
 * getter, if any, not called): only a top-level one matters, and `JSON.stringify` writes only own
 * properties. Whatever the value's prototype, JSON that starts with `{` is an object text (a
 * boxed primitive's is its value).
 * @throws SerializationError if `value` cannot be serialized
 */
function metaHolderJson(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.hasOwn(value, '_meta')) return undefined;
  // A toJSON method would be called with another key than in the whole message.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  const json = encodeJson(value);
  return json.charCodeAt(0) === OPEN_BRACE ? json : undefined;
}

/** The JSON text of an id: a number's own digits (see {@link decimalText}: each id is written once). */
function idJson(id: RequestId): string {
  return typeof id === 'number' && Number.isFinite(id) ? decimalText(id) : encodeJson(id);
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
export function notificationLineWithMeta(method: string, params: unknown, meta: MetaStamp): string {
  const json = params === undefined ? undefined : metaHolderJson(params);
  if (json === undefined) return notificationLine(method, params);
  const entry = meta.takeEntry();
  const methodText = encodeJson(method);
  if (entry === undefined) return `{"jsonrpc":"2.0","method":${methodText},"params":${json}}`;
  // One template (see responseLineWithMeta).
  return json.length === 2
    ? `{"jsonrpc":"2.0","method":${methodText},"params":{"_meta":{${entry}}}}`
    : `{"jsonrpc":"2.0","method":${methodText},"params":{"_meta":{${entry}},${json.slice(1)}}`;
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
  meta: MetaStamp,
): string {
  const json = error === undefined ? metaHolderJson(result) : undefined;
  if (json === undefined) return responseLine(id, rawId, result, error);
  const entry = meta.takeEntry();
  const idText = rawId ?? idJson(id);
  if (entry === undefined) return `{"jsonrpc":"2.0","id":${idText},"result":${json}}`;
  // One template, `entry` first in a `_meta` of the result's own: each part joined once (joining
  // the head first would make one more piece to flatten when the text is written).
  return json.length === 2
    ? `{"jsonrpc":"2.0","id":${idText},"result":{"_meta":{${entry}}}}`
    : `{"jsonrpc":"2.0","id":${idText},"result":{"_meta":{${entry}},${json.slice(1)}}`;
}
