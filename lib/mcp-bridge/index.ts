/**
 * `acp-wire/mcp-bridge`: the MCP-over-ACP bridge for agents that take only `http` or `stdio` MCP
 * servers: `McpBridge` (a proxy before the agent), its chain component and the stdio relay.
 *
 * @packageDocumentation
 */
export { MCP_BRIDGE_SESSION_METHODS, McpBridge, McpBridgeClosedError, defaultRelayCommand } from './bridge';
export type { McpBridgeMode, McpBridgeOptions } from './bridge';
export { mcpBridgeComponent } from './component';
export type { McpBridgeComponent, McpBridgeComponentOptions } from './component';
export { MCP_RELAY_TOKEN_ENV, MCP_RELAY_URL_ENV } from './declarations';
export type { McpBridgeTransport, McpRelayCommand } from './declarations';
export { FALLBACK_MCP_CAPABILITIES } from './handshake';
export { LEGACY_MCP_PROTOCOL_VERSIONS } from './legacy-mcp';
export { runMcpStdioRelay } from './stdio-relay';
export type { McpStdioRelayOptions } from './stdio-relay';
