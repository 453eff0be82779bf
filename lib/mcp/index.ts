/**
 * `acp-wire/mcp`: MCP-over-ACP: the `mcp/message` binding, providing MCP servers through the ACP
 * connection (`McpProvider`, `mcpServerHandler` for servers written with the MCP server library)
 * and calling them (`McpCaller`). The bridge for agents without MCP-over-ACP is `acp-wire/mcp-bridge`.
 *
 * @packageDocumentation
 */
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
} from './protocol';
export type {
  McpCallerIdentity,
  McpClientInfo,
  McpEnvelope,
  McpError,
  McpOutcome,
  McpServerDeclaration,
  McpTransports,
} from './protocol';
export { McpProvider, McpServerIdTakenError, McpServerRegistration } from './provider';
export type { McpNotificationSink, McpServerOptions } from './provider';
export { McpProtocolError } from './request-run';
export type { McpRequestContext, McpRequestHandler } from './request-run';
export { McpCaller } from './caller';
export type { McpCallOptions, McpNotification, McpRequestTarget } from './caller';
export { MCP_SERVER_LIBRARY, McpServerLibraryMissingError, mcpServerHandler } from './mcp-server-adapter';
export type { McpLibraryServer, McpLibraryServerFactory, McpServerHandler, McpServerHandlerOptions } from './mcp-server-adapter';
