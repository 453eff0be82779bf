/**
 * `acp-wire/connection`: the connection layer and everything below it: `Connection`, its messages
 * and errors, `Responder`, `SentRequest`, NDJSON framing, loggers. The same classes and functions
 * as the root `acp-wire` exports under the same names; importing this entry loads only these
 * modules and what they use.
 *
 * @packageDocumentation
 */
export type {
  ErrorObject,
  ErrorResponse,
  JsonObject,
  JsonValue,
  Message,
  NotificationMessage,
  Params,
  RequestId,
  RequestMessage,
  ResponseMessage,
  SuccessResponse,
} from '../jsonrpc/message';
export { classify, isRequestId, JSONRPC_VERSION } from '../jsonrpc/message';
export type { Classification } from '../jsonrpc/message';
export {
  AcpWireError,
  AlreadyAnsweredError,
  ConnectionClosedError,
  ErrorCode,
  ForwardingError,
  FrameTooLargeError,
  JsonParseError,
  NotificationHandlerError,
  ProtocolError,
  RequestAlreadySentError,
  RequestDetachedError,
  RequestTimeoutError,
  RpcError,
  SerializationError,
} from '../jsonrpc/errors';
export type { CloseReason } from '../jsonrpc/errors';
export { DEFAULT_MAX_LINE_BYTES, LineDecoder, NdjsonDecoder, NdjsonEncoder, NULL_VALUE, encodeMessage } from '../framing/ndjson';
export type { DecoderOptions, LineSink } from '../framing/ndjson';
export { createStderrLogger, defaultLogger, silentLogger } from '../support/logger';
export type { LogLevel, Logger, StderrLoggerOptions } from '../support/logger';
export type { Disposable } from '../support/disposable';
export {
  CANCEL_REQUEST_METHOD,
  INITIALIZE_METHOD,
  LEGACY_PROXY_INITIALIZE_METHOD,
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_INITIALIZE_METHOD,
  PROXY_SUCCESSOR_METHOD,
} from '../jsonrpc/protocol';
export { Connection } from './connection';
export type { ConnectionEvents, ConnectionOptions } from './connection';
export type { DrainOptions } from './drain';
export { relayBackpressure } from './relay';
export type { NotificationHandler, RequestHandler } from '../requests/router';
export { Responder } from '../requests/responder';
export { PreparedRequest, RequestCancellationHandle, SentRequest } from '../requests/sent-request';
export type { SendRequestOptions } from '../requests/sent-request';
export { configureIdleCollection } from '../gc/idle-collector';
export type { IdleCollectionOptions } from '../gc/idle-collector';
