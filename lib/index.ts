/**
 * acp-wire: JSON-RPC 2.0 over Node streams with the Agent Client Protocol's transport semantics.
 *
 * The root is what a user of `Connection`, `AcpClient`/`AcpAgent`, the conductor and the
 * transports needs: every name of `acp-wire/connection`, `acp-wire/acp`, `acp-wire/chain` and
 * `acp-wire/transports`, and the remote transports and the conductor's listener, which only the
 * root exports. Tracing, `check`, MCP-over-ACP, the MCP bridge and the server parts have entry
 * points of their own (`acp-wire/trace`, `acp-wire/check`, `acp-wire/mcp`, `acp-wire/mcp-bridge`,
 * `acp-wire/server`).
 *
 * @packageDocumentation
 * @module acp-wire
 */
// The connection layer and everything below it, loaded with the root.
export * from './connection/index';
// The subpaths above it: `npm run build` makes the compiled index load each module on first use.
export * from './acp/index';
export * from './chain/index';
export * from './transports/index';

// The remote transports: WebSocket and Streamable HTTP, both ends, and what survives a dropped connection.
export { connectWebSocket } from './transports/remote/websocket/websocket';
export type { ConnectWebSocketOptions } from './transports/remote/websocket/websocket';
export { connectHttp } from './transports/remote/http/http-client';
export type { ConnectHttpOptions } from './transports/remote/http/http-client';
export type { RemoteClientInfo, RemoteConnectionOptions, RemoteTransport } from './transports/remote/remote-connection';
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS } from './transports/remote/remote-connection';
export type { HeartbeatOptions } from './transports/remote/remote-connection';
export { DEFAULT_DRAIN_TIMEOUT_MS, HEALTH_PATH, listenRemote, listenRemoteStreams } from './transports/remote/http/remote-server';
export type {
  RemoteDrainOptions,
  RemoteHealth,
  RemoteListener,
  RemoteServerOptions,
  RemoteTlsOptions,
} from './transports/remote/http/remote-server';
export { DEFAULT_MAX_PAYLOAD, DEFAULT_PATH, RETRY_AFTER_SECONDS } from './transports/remote/limits';
export type { AccessOptions } from './transports/remote/limits';
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
export { OutputStalledError } from './transports/remote/http/http-server-stream';
export type { HttpServerLimits } from './transports/remote/http/http-server-stream';
export { DEFAULT_HTTP_IDLE_TIMEOUT_MS } from './transports/remote/http/http-idle';

// The conductor's listener: a chain per remote client (it loads the remote transports, so `acp-wire/chain` leaves it out).
export { DEFAULT_CHAIN_IDLE_TIMEOUT_MS, DEFAULT_MAX_CHAINS } from './chain/listener-defaults';
export { listenConductor } from './chain/conductor-listener';
export type { ConductorListener, ConductorListenerOptions, RemoteConductorOptions } from './chain/conductor-listener';
