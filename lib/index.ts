/**
 * acp-wire: JSON-RPC 2.0 over Node streams with the Agent Client Protocol's transport semantics.
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
} from './message';
export { classify, isRequestId, JSONRPC_VERSION } from './message';
export type { Classification } from './message';
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
} from './errors';
export type { CloseReason } from './errors';
export { DEFAULT_MAX_LINE_BYTES, LineDecoder, NdjsonDecoder, NdjsonEncoder, NULL_VALUE, encodeMessage } from './framing';
export type { DecoderOptions, LineSink } from './framing';
export { createStderrLogger, defaultLogger, silentLogger } from './logger';
export type { LogLevel, Logger, StderrLoggerOptions } from './logger';
export type { Disposable } from './disposable';
export {
  CANCEL_REQUEST_METHOD,
  INITIALIZE_METHOD,
  LEGACY_PROXY_INITIALIZE_METHOD,
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_INITIALIZE_METHOD,
  PROXY_SUCCESSOR_METHOD,
} from './protocol';
export { Connection } from './connection';
export type { ConnectionEvents, ConnectionOptions } from './connection';
export type { DrainOptions } from './drain';
export { relayBackpressure } from './relay';
export type { NotificationHandler, RequestHandler } from './router';
export { Responder } from './responder';
export { PreparedRequest, RequestCancellationHandle, SentRequest } from './sent-request';
export type { SendRequestOptions } from './sent-request';
export { configureIdleCollection } from './idle-collector';
export type { IdleCollectionOptions } from './idle-collector';
export { InitializeGate } from './acp/initialize';
export type { InitializeGateOptions, InitializeState } from './acp/initialize';
export {
  ACP_PROTOCOL_VERSION,
  AcpClient,
  SESSION_CANCEL_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_UPDATE_METHOD,
} from './acp/client';
export type {
  InitializeParams,
  InitializeResult,
  NewSessionParams,
  NewSessionResult,
  PromptParams,
  PromptResult,
  SessionUpdateHandler,
  SessionUpdateOptions,
  SessionUpdateParams,
} from './acp/client';
export { innermostMessage, successorTarget, unwrapSuccessor, wrapSuccessor } from './acp/successor';
export type { MessageTarget, SuccessorEnvelope } from './acp/successor';
export { isCancelNotification, sendProxiedMessageTo } from './acp/forwarding';
export { ProxyComponent } from './acp/proxy';
export type { SuccessorRequestHandler } from './acp/proxy';
export { Conductor } from './acp/conductor';
export type { ConductorOptions, ConductorOutcome } from './acp/conductor';
export type { ChainComponent, ComponentRole, ComponentSource } from './acp/chain-component';
export { CommandLineError, splitCommandLine } from './acp/command-line';
export { createConnectionPair } from './transports/pair';
export { connectStdio } from './transports/stdio';
export { spawnConnection } from './transports/child-process';
export type { ChildConnection, ChildExit, SpawnConnectionOptions } from './transports/child-process';
export { connectTcp, listenTcp, socketConnection } from './transports/tcp';
export type { TcpAddress, TcpListener } from './transports/tcp';
