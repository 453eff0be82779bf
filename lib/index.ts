/**
 * acp-wire: JSON-RPC 2.0 over Node streams with the Agent Client Protocol's transport semantics.
 *
 * @packageDocumentation
 */
// The connection layer and everything below it, loaded with the root (`acp-wire/connection` alone loads only these).
export * from './connection/index';
export { InitializeGate } from './acp/initialize';
export type { InitializeGateOptions, InitializeState } from './acp/initialize';
export {
  ACP_PROTOCOL_VERSION,
  ACP_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  acceptProtocolVersion,
  isProtocolVersion,
  negotiatedVersion,
  selectProtocolVersion,
  unsupportedProtocolVersion,
} from './acp/negotiation';
export type { AcpVersion, UnsupportedProtocolVersionData } from './acp/negotiation';
export {
  AUTHENTICATE_METHOD,
  AUTH_LOGIN_METHOD,
  FS_READ_TEXT_FILE_METHOD,
  FS_WRITE_TEXT_FILE_METHOD,
  SESSION_CANCEL_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_REQUEST_PERMISSION_METHOD,
  SESSION_UPDATE_METHOD,
  SESSION_CLOSE_METHOD,
  SESSION_LOAD_METHOD,
  SESSION_RESUME_METHOD,
  TERMINAL_METHODS,
} from './acp/methods';
export { isSessionUpdateKind } from './acp/types';
export type { ContentBlock, Implementation, SessionUpdate, SessionUpdateOf, SessionUpdateParams, StopReason } from './acp/types';
export type * as AcpV1 from './acp/schema/v1';
export type * as AcpV2 from './acp/schema/v2';
export { AcpClient } from './acp/client';
export type { AcpClientOptions } from './acp/client';
export type {
  AgentInitialization,
  ClientInitializeParams,
  ListSessionsParams,
  NewSessionParams,
  PromptParams,
  ResumeSessionParams,
  SetConfigOptionParams,
  SessionUpdateHandler,
  SessionUpdateOptions,
} from './acp/client-params';
export { SessionLostError } from './acp/session-reattach';
export type { ReattachOptions, ReattachedEvent } from './acp/session-reattach';
export { PromptTurn } from './acp/turn';
export type { PromptOptions, TurnResult } from './acp/turn';
export type { AcpClientHandlers, ClientRequestContext, ClientRequestHandler, TerminalHandlers } from './acp/client-handlers';
export { AcpAgent } from './acp/agent';
export type {
  AcpAgentOptions,
  AgentContext,
  AgentHandler,
  AgentInitializeAnswer,
  AgentInitializeRequest,
  AgentNewSessionAnswer,
  AgentNewSessionRequest,
  AgentAttachSessionRequest,
  AgentPromptRequest,
  AgentSessionRequest,
  AgentSessionlessRequest,
  AgentAuthenticateRequest,
  AgentConfigOptionRequest,
  AgentModeRequest,
  AgentToolCallRequest,
  AgentTerminalRequest,
} from './acp/agent-options';
export { MemorySessionStore } from './acp/session-store';
export type {
  MemorySessionStoreOptions,
  SessionChanges,
  SessionPage,
  SessionQuery,
  SessionStore,
  StoredMessage,
  StoredSession,
} from './acp/session-store';
export { AgentTurn } from './acp/agent-turn';
export type { AgentFactory, AgentFactoryInfo, HostedAgent } from './hosting/agent-factory';
export { innermostMessage, successorTarget, unwrapSuccessor, wrapSuccessor } from './chain/successor';
export type { MessageTarget, SuccessorEnvelope } from './chain/successor';
export { isCancelNotification, sendProxiedMessageTo } from './chain/forwarding';
export { ProxyComponent } from './chain/proxy';
export type { SuccessorRequestHandler } from './chain/proxy';
export { COMPONENT_NOT_STARTED_REASON, Conductor } from './chain/conductor';
export type { ConductorTraceOptions } from './chain/conductor-trace';
export { AGENT_COMPONENT, CLIENT_COMPONENT, TRACE_EVENT_SCHEMA, proxyComponentName } from './trace/events';
export type { NotificationTraceEvent, RequestTraceEvent, ResponseTraceEvent, TraceEvent, TraceProtocol } from './trace/events';
export { TraceFileWriter, parseTraceText, readTraceFile } from './trace/file';
export { TraceStore } from './trace/store';
export { serveTraceViewer } from './trace/server';
export type { TraceViewer, TraceViewerOptions } from './trace/server';
export type { TraceStoreOptions } from './trace/store';
export { CREDENTIAL_ENV_WORDS, CREDENTIAL_QUERY_KEYS, REDACTED, redactCredentials } from './trace/redact';
export { CHECK_GROUPS } from './check/outcome';
export type { CheckCounts, CheckGroup, CheckOutcome, CheckReport, CheckResult, CheckStatus } from './check/outcome';
export type { Rule, Severity } from './check/rules';
export { checkAgent, checkProxy } from './check/run';
export { checkRemote } from './check/remote-run';
export type { RemoteCheckOptions } from './check/remote-run';
export type { CheckOptions } from './check/run';
export { AgentUnusableError } from './check/preflight';
export type { AgentUnusableReason } from './check/preflight';
export { formatCheckReport } from './check/format';
export { formatBaseline, parseBaseline } from './check/baseline';
export { CHECK_REPORT_SCHEMA_VERSION, toJsonReport } from './check/json-report';
export type { JsonCheckReport, JsonCheckResult, JsonUnusableReport, ReportTool } from './check/json-report';
export type { EvidenceLine } from './check/evidence';
export type { LineDirection, WireLine } from './check/wire-line';
export { toJunitXml } from './check/junit';
export {
  BAGGAGE_META_KEY,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
  childTraceparent,
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  traceContextOf,
  withChildSpan,
  withTraceContext,
} from './trace/context';
export type { TraceContextMeta, TraceParent } from './trace/context';
export { automaticAnswerOf } from './trace/otel';
export type { AutomaticAnswer } from './trace/otel';
export type { ConductorOptions, ConductorOutcome } from './chain/conductor';
export { DEFAULT_CHAIN_IDLE_TIMEOUT_MS, DEFAULT_MAX_CHAINS } from './chain/listener-defaults';
export { listenConductor } from './chain/conductor-listener';
export type { ConductorListener, ConductorListenerOptions, RemoteConductorOptions } from './chain/conductor-listener';
export { ComponentConnectionError } from './chain/url-components';
export type { ChainComponent, ComponentRole, ComponentSource } from './chain/chain-component';
export { CommandLineError, splitCommandLine } from './chain/command-line';
export { ClientPool, ClientRefusedError, PooledClient } from './server/client-pool';
export type {
  ClientPoolEvents,
  ClientPoolOptions,
  ClientTransport,
  DrainPoolOptions,
  DrainResult,
  PooledChain,
  RefusalCode,
} from './server/client-pool';
export { LineWorkTracker, connectionWorkProbe } from './server/work-probe';
export type { WorkProbe } from './server/work-probe';
export { createConnectionPair } from './transports/pair';
export { connectStdio } from './transports/stdio';
export { spawnConnection } from './transports/child-process';
export type { ChildConnection, ChildExit, SpawnConnectionOptions } from './transports/child-process';
export { DEFAULT_MAX_CONNECTIONS, connectTcp, listenTcp, socketConnection } from './transports/tcp';
export type { TcpAddress, TcpListenOptions, TcpListener } from './transports/tcp';
export { connectWebSocket } from './transports/remote/websocket/websocket';
export type { ConnectWebSocketOptions } from './transports/remote/websocket/websocket';
export type { RemoteClientInfo, RemoteConnectionOptions, RemoteTransport } from './transports/remote/remote-connection';
export { DEFAULT_DRAIN_TIMEOUT_MS, HEALTH_PATH, listenRemote, listenRemoteStreams } from './transports/remote/http/remote-server';
export type {
  RemoteDrainOptions,
  RemoteHealth,
  RemoteListener,
  RemoteServerOptions,
  RemoteTlsOptions,
} from './transports/remote/http/remote-server';
export { DEFAULT_MAX_PAYLOAD, DEFAULT_PATH, RETRY_AFTER_SECONDS } from './transports/remote/limits';
export { DEFAULT_HOST, isLoopbackHost } from './server/loopback';
export type { AccessOptions } from './transports/remote/limits';
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS } from './transports/remote/remote-connection';
export type { HeartbeatOptions } from './transports/remote/remote-connection';
export {
  HeartbeatTimeoutError,
  HttpStatusError,
  ResumeFailedError,
  ServerGoingAwayError,
  WebSocketCloseCode,
  WebSocketCloseError,
} from './transports/remote/errors';
export {
  DEFAULT_HTTP_HEARTBEAT_MS,
  DEFAULT_RESUME_BUFFER_MESSAGES,
  DEFAULT_RESUME_BUFFER_MS,
  DEFAULT_RESUME_GRACE_MS,
} from './transports/remote/resume/resume-options';
export type {
  ReconnectOptions,
  ReconnectingEvent,
  ResumableCapability,
  ResumedEvent,
  ResumeOptions,
} from './transports/remote/resume/resume-options';
export { CURSOR_META_KEY } from './transports/remote/resume/stream-cursor';
export {
  STREAM_ACK_METHOD,
  STREAM_RESUME_FAILED_METHOD,
  STREAM_RESUME_METHOD,
  STREAM_RESUMED_METHOD,
} from './transports/remote/resume/control-messages';
export { connectHttp } from './transports/remote/http/http-client';
export type { ConnectHttpOptions } from './transports/remote/http/http-client';
export { OutputStalledError } from './transports/remote/http/http-server-stream';
export { DEFAULT_HTTP_IDLE_TIMEOUT_MS } from './transports/remote/http/http-idle';
export type { HttpServerLimits } from './transports/remote/http/http-server-stream';
export { connectUrl, isPeerUrl } from './transports/url';
export type { ConnectUrlOptions } from './transports/url';

// MCP-over-ACP: MCP servers provided and called through the ACP connection.
export {
  MCP_MESSAGE_METHOD,
  MCP_PROTOCOL_VERSION,
  McpBindingErrorCode,
  isMcpServerDeclaration,
  mcpTransportsOf,
  parseMcpEnvelope,
  parseMcpOutcome,
  withAcpMcpTransport,
  withMcpRequestMeta,
  type McpCallerIdentity,
  type McpClientInfo,
  type McpEnvelope,
  type McpError,
  type McpOutcome,
  type McpServerDeclaration,
  type McpTransports,
} from './mcp/protocol';
export { McpProvider, McpServerIdTakenError, McpServerRegistration, type McpNotificationSink, type McpServerOptions } from './mcp/provider';
export { McpProtocolError, type McpRequestContext, type McpRequestHandler } from './mcp/request-run';
export { McpCaller, type McpCallOptions, type McpNotification, type McpRequestTarget } from './mcp/caller';
export {
  MCP_SERVER_LIBRARY,
  McpServerLibraryMissingError,
  mcpServerHandler,
  type McpLibraryServer,
  type McpLibraryServerFactory,
  type McpServerHandler,
  type McpServerHandlerOptions,
} from './mcp/mcp-server-adapter';

// The MCP-over-ACP bridge: `acp` MCP servers for agents that take only http or stdio ones.
export {
  MCP_BRIDGE_SESSION_METHODS,
  McpBridge,
  McpBridgeClosedError,
  defaultRelayCommand,
  type McpBridgeMode,
  type McpBridgeOptions,
} from './mcp-bridge/bridge';
export { mcpBridgeComponent, type McpBridgeComponent, type McpBridgeComponentOptions } from './mcp-bridge/component';
export { MCP_RELAY_TOKEN_ENV, MCP_RELAY_URL_ENV, type McpBridgeTransport, type McpRelayCommand } from './mcp-bridge/declarations';
export { FALLBACK_MCP_CAPABILITIES } from './mcp-bridge/handshake';
export { LEGACY_MCP_PROTOCOL_VERSIONS } from './mcp-bridge/legacy-mcp';
export { runMcpStdioRelay, type McpStdioRelayOptions } from './mcp-bridge/stdio-relay';
