/**
 * JSON-RPC 2.0 message types and the guards that classify a decoded JSON value.
 *
 * @packageDocumentation
 */

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** The `params` of a request or notification: an object or an array (by-name or by-position). */
export type Params = JsonObject | JsonValue[];

/**
 * A JSON-RPC request id.
 *
 * @remarks
 * Ids are matched by JSON value and type: `1` and `"1"` are different ids.
 */
export type RequestId = string | number | null;

/** A JSON-RPC request: has a `method` and an `id`. */
export interface RequestMessage {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** Chosen by the sender; the response carries the same id. */
  id: RequestId;
  /** The method to call. */
  method: string;
  /** By-name (object) or by-position (array) parameters; may be absent. */
  params?: Params;
}

/** A JSON-RPC notification: has a `method` and no `id`; it is never answered. */
export interface NotificationMessage {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** The notification's method. */
  method: string;
  /** By-name (object) or by-position (array) parameters; may be absent. */
  params?: Params;
}

/** The `error` member of an error response. */
export interface ErrorObject {
  /** An integer error code, e.g. `-32601` (see `ErrorCode`). */
  code: number;
  /** A short description of the error. */
  message: string;
  /** Optional extra information; absent when there is none. */
  data?: JsonValue;
}

/** A successful response. */
export interface SuccessResponse {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** The id of the request this answers. */
  id: RequestId;
  /** The request's result. */
  result: JsonValue;
}

/** An error response. */
export interface ErrorResponse {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** The id of the request this answers; `null` when it could not be read from the request. */
  id: RequestId;
  /** What went wrong. */
  error: ErrorObject;
}

/** Any JSON-RPC response. */
export type ResponseMessage = SuccessResponse | ErrorResponse;

/** Any JSON-RPC 2.0 message. */
export type Message = RequestMessage | NotificationMessage | ResponseMessage;

/** The JSON-RPC protocol version string every message carries. */
export const JSONRPC_VERSION = '2.0';

/**
 * Whether `value` is a valid request id: a string, a number or `null`.
 *
 * @remarks `JSON.parse` turns a number too large for a double (`1e400`) into `Infinity`; such
 * ids are rejected, since they could not be echoed.
 */
export function isRequestId(value: unknown): value is RequestId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Whether `value` is a JSON object: non-null, not an array. @internal */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` is a valid `params` member: a non-null object or an array. */
export function isParams(value: unknown): value is Params {
  return typeof value === 'object' && value !== null;
}

/** Whether `value` is a JSON-RPC error object (`code` integer, `message` string). */
export function isErrorObject(value: unknown): value is ErrorObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as { code?: unknown; message?: unknown };
  return Number.isInteger(v.code) && typeof v.message === 'string';
}

/**
 * The result of classifying one decoded JSON value.
 *
 * @remarks
 * `invalid` carries the reason and the id to answer with (`null` when the message had no valid id);
 * `badResponse` is a message without `method` that is not a well-formed response (it is logged and
 * dropped, never answered).
 */
export type Classification =
  | {
      /** A well-formed request: it is dispatched and must be answered. */
      kind: 'request';
      /** The value, typed as the request it was checked to be. */
      message: RequestMessage;
    }
  | {
      /** A well-formed notification: it is dispatched and never answered. */
      kind: 'notification';
      /** The value, typed as the notification it was checked to be. */
      message: NotificationMessage;
    }
  | {
      /** A well-formed response: routed by its id to the request it answers. */
      kind: 'response';
      /** The value, typed as the response it was checked to be. */
      message: ResponseMessage;
    }
  | {
      /** A request or notification that breaks the contract: answered with `-32600` Invalid Request. */
      kind: 'invalid';
      /** The id to answer with: the message's own when it was valid, else `null`. */
      id: RequestId;
      /** What is wrong with the message, in words (for the error's message and the log). */
      reason: string;
    }
  | {
      /** A message without `method` that is not a well-formed response: dropped, never answered. */
      kind: 'badResponse';
      /** What is wrong with the message, in words (for the log). */
      reason: string;
    };

/**
 * Classifies a decoded JSON value as a request, notification or response, or says why it is invalid.
 *
 * @remarks
 * Follows the wire contract: arrays (batches) are invalid; `jsonrpc` must be `"2.0"`; `method` a
 * string; `id`, when present, a string, number or null; `params`, when present, an object or array.
 * A message without `method` is a response and must carry exactly one of `result` and `error`.
 */
export function classify(value: unknown): Classification {
  const kind = validKindOf(value);
  if (kind !== undefined) return { kind, message: value } as Classification;
  if (typeof value !== 'object' || value === null) {
    return { kind: 'invalid', id: null, reason: 'a message must be a JSON object' };
  }
  if (Array.isArray(value)) {
    return { kind: 'invalid', id: null, reason: 'batches are not supported' };
  }
  const m = value as Record<string, unknown>;
  const hasId = Object.hasOwn(m, 'id');
  const validId = hasId && isRequestId(m.id);
  const replyId = validId ? (m.id as RequestId) : null;
  if (m.jsonrpc !== JSONRPC_VERSION) {
    return { kind: 'invalid', id: replyId, reason: '"jsonrpc" must be "2.0"' };
  }
  if (!Object.hasOwn(m, 'method')) {
    return classifyResponse(m, hasId, validId);
  }
  if (typeof m.method !== 'string') {
    return { kind: 'invalid', id: replyId, reason: '"method" must be a string' };
  }
  if (hasId && !validId) {
    return { kind: 'invalid', id: null, reason: '"id" must be a string, a number or null' };
  }
  if (Object.hasOwn(m, 'params') && !isParams(m.params)) {
    return { kind: 'invalid', id: replyId, reason: '"params" must be an object or an array' };
  }
  return hasId
    ? { kind: 'request', message: m as unknown as RequestMessage }
    : { kind: 'notification', message: m as unknown as NotificationMessage };
}

/**
 * The kind of a valid message, or `undefined` when {@link classify} would find it invalid or a
 * malformed response: the same checks, without building a result (the connection's path for every
 * message; {@link classify} only runs for a message that fails them, to say why).
 *
 * @internal
 */
export function validKindOf(value: unknown): 'request' | 'notification' | 'response' | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== JSONRPC_VERSION) return undefined;
  const hasId = Object.hasOwn(m, 'id');
  if (hasId && !isRequestId(m.id)) return undefined;
  if (!Object.hasOwn(m, 'method')) {
    if (!hasId) return undefined;
    const hasError = Object.hasOwn(m, 'error');
    if (Object.hasOwn(m, 'result') === hasError || (hasError && !isErrorObject(m.error))) return undefined;
    return 'response';
  }
  if (typeof m.method !== 'string') return undefined;
  if (Object.hasOwn(m, 'params') && !isParams(m.params)) return undefined;
  return hasId ? 'request' : 'notification';
}

function classifyResponse(m: Record<string, unknown>, hasId: boolean, validId: boolean): Classification {
  if (!hasId || !validId) return { kind: 'badResponse', reason: 'a response needs a valid "id"' };
  const hasResult = Object.hasOwn(m, 'result');
  const hasError = Object.hasOwn(m, 'error');
  if (hasResult === hasError) {
    return { kind: 'badResponse', reason: 'a response needs exactly one of "result" and "error"' };
  }
  if (hasError && !isErrorObject(m.error)) {
    return { kind: 'badResponse', reason: '"error" must have an integer "code" and a string "message"' };
  }
  return { kind: 'response', message: m as unknown as ResponseMessage };
}
