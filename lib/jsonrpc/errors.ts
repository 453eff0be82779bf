/**
 * Errors: {@link RpcError} is the only error that crosses the wire; every other class here is a
 * local failure with a stable string `code`.
 *
 * @packageDocumentation
 */
import type { ErrorObject, JsonValue } from './message';

/** JSON-RPC and ACP error codes. */
export const ErrorCode = {
  /** The line was not valid JSON. */
  ParseError: -32700,
  /** The message was not a valid request. */
  InvalidRequest: -32600,
  /** No handler for the request's method. */
  MethodNotFound: -32601,
  /** The params were invalid for the method. */
  InvalidParams: -32602,
  /** The handler failed, or dropped its responder without answering. */
  InternalError: -32603,
  /** ACP: the agent needs the client to `authenticate` first. */
  AuthRequired: -32000,
  /** ACP: a resource the request names (a session, a file) does not exist. */
  ResourceNotFound: -32002,
  /** ACP: the agent supports none of the protocol versions the client can speak. */
  UnsupportedProtocolVersion: -32022,
  /** The request was cancelled with `$/cancel_request`. */
  RequestCancelled: -32800,
} as const;

/**
 * An error that is sent to, or was received from, the peer as a JSON-RPC error object.
 *
 * @remarks
 * Throw one from a request handler to answer with exactly its `code`, `message` and `data`.
 * A rejected `SentRequest` rejects with one built from the peer's error object.
 */
export class RpcError extends Error {
  /** Always `'RpcError'`. */
  override readonly name = 'RpcError';
  /** The JSON-RPC error code. */
  readonly code: number;
  /** Optional extra data; `undefined` means the member is absent on the wire. */
  readonly data: JsonValue | undefined;

  /**
   * @param code - the JSON-RPC error code (an integer)
   * @param message - a short description
   * @param data - optional extra data, sent as the error object's `data`
   * @throws TypeError if `code` is not an integer
   */
  constructor(code: number, message: string, data?: JsonValue, options?: ErrorOptions) {
    super(message, options);
    if (!Number.isInteger(code)) throw new TypeError('RpcError: code must be an integer');
    this.code = code;
    this.data = data;
  }

  /** The wire form: `{code, message}` plus `data` when it is defined. */
  toJSON(): ErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** Builds an RpcError from a wire error object. */
  static fromJSON(error: ErrorObject): RpcError {
    return new RpcError(error.code, error.message, error.data);
  }

  /** `-32700` "Parse error". */
  static parseError(data?: JsonValue): RpcError {
    return new RpcError(ErrorCode.ParseError, 'Parse error', data);
  }

  /** `-32600` "Invalid Request". */
  static invalidRequest(data?: JsonValue): RpcError {
    return new RpcError(ErrorCode.InvalidRequest, 'Invalid Request', data);
  }

  /** `-32601` "Method not found" with `data` naming the method. */
  static methodNotFound(method: string): RpcError {
    return new RpcError(ErrorCode.MethodNotFound, 'Method not found', method);
  }

  /** `-32602` "Invalid params". */
  static invalidParams(data?: JsonValue): RpcError {
    return new RpcError(ErrorCode.InvalidParams, 'Invalid params', data);
  }

  /** `-32603` "Internal error". */
  static internalError(data?: JsonValue): RpcError {
    return new RpcError(ErrorCode.InternalError, 'Internal error', data);
  }

  /** `-32800` "Request cancelled", with no data. */
  static requestCancelled(): RpcError {
    return new RpcError(ErrorCode.RequestCancelled, 'Request cancelled');
  }

  /**
   * The error object a handler failure answers with.
   *
   * @remarks
   * - an RpcError: its own `code`, `message` and `data`;
   * - any other object with an integer `code` and a string `message` (another library's JSON-RPC
   *   error: the ACP SDK's `RequestError`, vscode-jsonrpc's `ResponseError`, a plain object): that
   *   `code` and `message`, and its `data` when it is present and JSON can serialize it (else the
   *   answer has no `data`);
   * - anything else: `-32603` "Internal error" with a string `data` describing the thrown value.
   *   A `DOMException` (e.g. an `AbortError`) is "anything else": its numeric `code` is a legacy
   *   DOM code, not a JSON-RPC one.
   *
   * Reading the thrown object's members never throws out of here: a getter that throws makes it
   * "anything else".
   */
  static fromThrown(thrown: unknown): ErrorObject {
    if (thrown instanceof RpcError) return thrown.toJSON();
    return foreignErrorObject(thrown) ?? RpcError.internalError(describeThrown(thrown)).toJSON();
  }
}

/** The error object of a foreign JSON-RPC error (integer `code`, string `message`), or `undefined`. */
function foreignErrorObject(thrown: unknown): ErrorObject | undefined {
  if (typeof thrown !== 'object' || thrown === null || thrown instanceof DOMException) return undefined;
  try {
    const { code, message } = thrown as { code?: unknown; message?: unknown };
    if (!Number.isInteger(code) || typeof message !== 'string') return undefined;
    const data = serializableData((thrown as { data?: unknown }).data);
    return data === undefined ? { code: code as number, message } : { code: code as number, message, data };
  } catch {
    return undefined;
  }
}

/** `data` as a JSON value when JSON can serialize it, else `undefined` (the member is left out). */
function serializableData(data: unknown): JsonValue | undefined {
  if (data === undefined) return undefined;
  try {
    const text = JSON.stringify(data);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}

/**
 * An {@link RpcError} for what the peer sent (an error answer, a `$/cancel_request`), built
 * without capturing stack frames.
 *
 * @remarks Such an error is created while a received line is dispatched: its stack would only list
 * acp-wire's own receive path (decoder, dispatch, routing), never the code that sent the request or
 * awaits it, so capturing them (walking and translating optimized frames) would be work for
 * nothing on every cancellation. Its `stack` is its first line only (`RpcError: Request cancelled`).
 *
 * @internal
 */
export function peerRpcError(code: number, message: string, data?: JsonValue): RpcError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RpcError(code, message, data);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A one-line description of any thrown value, for logs and `-32603` data. */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return `${thrown.name}: ${thrown.message}`;
  try {
    return typeof thrown === 'string' ? thrown : String(JSON.stringify(thrown) ?? thrown);
  } catch {
    return fallbackDescription(thrown);
  }
}

/** A description that cannot throw, for values JSON cannot serialize (cycles, deep nesting). */
function fallbackDescription(thrown: unknown): string {
  try {
    return String(thrown);
  } catch {
    // String() itself fails on deeply nested arrays and on objects without a usable toString.
    return Object.prototype.toString.call(thrown);
  }
}

/** Base class of acp-wire's local errors: they never cross the wire. */
export abstract class AcpWireError extends Error {
  /** A stable machine-readable code, e.g. `ACP_WIRE_CONNECTION_CLOSED`. */
  abstract readonly code: string;
}

/** Why a connection closed. */
export type CloseReason = 'closed locally' | 'input ended' | 'input error' | 'output error' | 'peer exited';

/**
 * A request could not complete because its connection closed (or was already closed).
 */
export class ConnectionClosedError extends AcpWireError {
  /** Always `'ConnectionClosedError'`. */
  override readonly name = 'ConnectionClosedError';
  /** Always `'ACP_WIRE_CONNECTION_CLOSED'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_CONNECTION_CLOSED';
  /**
   * @param reason - why the connection closed
   * @param method - the method of the request that failed, when there is one
   */
  constructor(
    readonly reason: CloseReason,
    readonly method?: string,
    options?: ErrorOptions,
  ) {
    super(
      method === undefined ? `connection closed (${reason})` : `connection closed (${reason}) before \`${method}\` was answered`,
      options,
    );
  }
}

/**
 * An incoming line was longer than the configured limit; it was discarded up to its newline.
 *
 * @remarks `head` holds the line's first bytes, decoded as UTF-8: at most 1,024, and no more than had
 * arrived when the line crossed the limit (empty when not known). The connection reads a
 * request's id from it, to answer `-32600`.
 */
export class FrameTooLargeError extends AcpWireError {
  /** Always `'FrameTooLargeError'`. */
  override readonly name = 'FrameTooLargeError';
  /** Always `'ACP_WIRE_FRAME_TOO_LARGE'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_FRAME_TOO_LARGE';
  /** The first bytes of the discarded line. */
  readonly head: string;
  /** @param limit - the configured `maxLineBytes` the line exceeded */
  constructor(
    readonly limit: number,
    options?: ErrorOptions & { head?: string },
  ) {
    super(`an incoming line exceeded the limit of ${limit} bytes and was discarded`, options);
    this.head = options?.head ?? '';
  }
}

/** An incoming line was not JSON; the peer was answered `-32700`. The `cause` is the SyntaxError. */
export class JsonParseError extends AcpWireError {
  /** Always `'JsonParseError'`. */
  override readonly name = 'JsonParseError';
  /** Always `'ACP_WIRE_JSON_PARSE'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_JSON_PARSE';
  /** @param line - the line as received (decoded as UTF-8, without its newline) */
  constructor(
    readonly line: string,
    options?: ErrorOptions,
  ) {
    super(`an incoming line is not JSON: ${abbreviate(line)}`, options);
  }
}

/**
 * The peer sent something that is not a valid JSON-RPC message (answered `-32600` when it could be
 * a request) or a response that matches nothing (dropped).
 */
export class ProtocolError extends AcpWireError {
  /** Always `'ProtocolError'`. */
  override readonly name = 'ProtocolError';
  /** Always `'ACP_WIRE_PROTOCOL'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_PROTOCOL';
}

/** A responder was asked to answer a second time; nothing was sent. */
export class AlreadyAnsweredError extends AcpWireError {
  /** Always `'AlreadyAnsweredError'`. */
  override readonly name = 'AlreadyAnsweredError';
  /** Always `'ACP_WIRE_ALREADY_ANSWERED'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_ALREADY_ANSWERED';
  /** @param method - the method of the request that was already answered */
  constructor(
    readonly method: string,
    options?: ErrorOptions,
  ) {
    super(`the request \`${method}\` was already answered or handed off`, options);
  }
}

/** A notification handler threw or rejected; the error is the `cause`. Never sent to the peer. */
export class NotificationHandlerError extends AcpWireError {
  /** Always `'NotificationHandlerError'`. */
  override readonly name = 'NotificationHandlerError';
  /** Always `'ACP_WIRE_NOTIFICATION_HANDLER'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_NOTIFICATION_HANDLER';
  /** @param method - the method of the notification whose handler failed */
  constructor(
    readonly method: string,
    options?: ErrorOptions,
  ) {
    super(`the handler of notification \`${method.length > 200 ? `${method.slice(0, 200)}…` : method}\` failed`, options);
  }
}

/**
 * No answer arrived within the grace period after a request's `timeout` cancelled it; the request
 * was detached (a late answer is discarded).
 */
export class RequestTimeoutError extends AcpWireError {
  /** Always `'RequestTimeoutError'`. */
  override readonly name = 'RequestTimeoutError';
  /** Always `'ACP_WIRE_REQUEST_TIMEOUT'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_REQUEST_TIMEOUT';
  /**
   * @param method - the method of the request that timed out
   * @param timeout - the `timeout` option, in milliseconds
   */
  constructor(
    readonly method: string,
    readonly timeout: number,
    options?: ErrorOptions,
  ) {
    super(`\`${method}\` was not answered within ${timeout} ms and its cancellation grace period`, options);
  }
}

/** A message could not be serialized (e.g. a BigInt or a cycle in params); nothing was sent. */
export class SerializationError extends AcpWireError {
  /** Always `'SerializationError'`. */
  override readonly name = 'SerializationError';
  /** Always `'ACP_WIRE_SERIALIZATION'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_SERIALIZATION';
}

/** A detached request was awaited: its answer is discarded, so awaiting it can never settle otherwise. */
export class RequestDetachedError extends AcpWireError {
  /** Always `'RequestDetachedError'`. */
  override readonly name = 'RequestDetachedError';
  /** Always `'ACP_WIRE_REQUEST_DETACHED'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_REQUEST_DETACHED';
  /** @param method - the method of the detached request that was awaited */
  constructor(
    readonly method: string,
    options?: ErrorOptions,
  ) {
    super(`\`${method}\` was detached: its answer is discarded`, options);
  }
}

/** `PreparedRequest.send()` was called a second time; nothing was sent. */
export class RequestAlreadySentError extends AcpWireError {
  /** Always `'RequestAlreadySentError'`. */
  override readonly name = 'RequestAlreadySentError';
  /** Always `'ACP_WIRE_REQUEST_ALREADY_SENT'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_REQUEST_ALREADY_SENT';
  /** @param method - the method of the prepared request that was sent before */
  constructor(
    readonly method: string,
    options?: ErrorOptions,
  ) {
    super(`\`${method}\` was already sent`, options);
  }
}

/**
 * `SentRequest.forwardResponseTo()` cannot forward: the answer is already forwarded elsewhere, or
 * it was discarded by `detach()`. The responder is left as it was. Also thrown by
 * `sendProxiedMessageTo()` for a notification whose params cannot be serialized again (the `cause`
 * is the {@link SerializationError}); nothing is sent.
 */
export class ForwardingError extends AcpWireError {
  /** Always `'ForwardingError'`. */
  override readonly name = 'ForwardingError';
  /** Always `'ACP_WIRE_FORWARDING'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_FORWARDING';
  /**
   * @param method - the method of the request whose answer could not be forwarded
   * @param message - why it could not (already forwarded, or detached)
   */
  constructor(
    readonly method: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

function abbreviate(text: string): string {
  return text.length > 80 ? `${JSON.stringify(text.slice(0, 80))}…` : JSON.stringify(text);
}
