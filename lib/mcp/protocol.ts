/**
 * The MCP-over-ACP binding on the wire: `mcp/message` requests and notifications, the `type: "acp"`
 * declaration, the carrier of an inner MCP outcome, the binding's error codes, and the capability
 * an agent advertises for it (ACP v1 and v2).
 *
 * @packageDocumentation
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import type { AcpVersion } from '../acp/negotiation';
import type { McpError, McpServerAcp, MessageMcpNotification, MessageMcpRequest } from '../acp/schema/mcp';

export type { McpError, MessageMcpNotification, MessageMcpRequest };

/** The ACP method that carries MCP requests (toward the provider) and request-scoped notifications (back). */
export const MCP_MESSAGE_METHOD = 'mcp/message';

/** The older binding's request that opens a connection to a server (`{acpId}` → `{connectionId}`). */
export const LEGACY_MCP_CONNECT_METHOD = 'mcp/connect';

/** The older binding's request that closes a connection opened by {@link LEGACY_MCP_CONNECT_METHOD}. */
export const LEGACY_MCP_DISCONNECT_METHOD = 'mcp/disconnect';

/** The MCP revision the binding carries: stateless, no MCP `initialize`. */
export const MCP_PROTOCOL_VERSION = '2026-07-28';

/** Inner `params._meta` key: the MCP revision of one request. */
export const MCP_META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';

/** Inner `params._meta` key: the calling MCP client's capabilities. */
export const MCP_META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** Inner `params._meta` key: the calling MCP client's name and version. */
export const MCP_META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';

/** Inner `params._meta` key: the level at and above which the client wants the request's log messages. */
export const MCP_META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

/** Inner result `_meta` key: the answering server's name and version. */
export const MCP_META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/**
 * The outer ACP error codes of the binding. An inner MCP error is never one of these: it travels in
 * a successful answer's `error` carrier.
 */
export const McpBindingErrorCode = {
  /** A malformed `mcp/message`, or a `(serverId, requestId)` pair that is already active. */
  InvalidParams: -32602,
  /** The caller cancelled the request. */
  RequestCancelled: -32800,
  /** The server's limit on active requests was reached. */
  ResourceLimitExceeded: -33000,
  /** No server with this `serverId` is registered anywhere on the route. */
  ServerUnavailable: -33001,
  /** The server failed without an MCP outcome. */
  BackendFailed: -33002,
} as const;

/** What goes in a session's `mcpServers` for a server provided over ACP. */
export interface McpServerDeclaration extends McpServerAcp {
  /** Always `"acp"`. */
  type: 'acp';
}

/** The one inner MCP outcome an `mcp/message` answer carries: a result (any JSON, `null` included) or an MCP error. */
export type McpOutcome =
  | {
      /** The inner MCP result. */
      result: JsonValue;
      /** The carrier's own `_meta`. */
      _meta?: JsonObject;
    }
  | {
      /** The inner MCP error. */
      error: McpError;
      /** The carrier's own `_meta`. */
      _meta?: JsonObject;
    };

/** The fields of a received `mcp/message`, checked. */
export interface McpEnvelope {
  /** The declared server it is for. */
  readonly serverId: string;
  /** The caller's id for the inner MCP request (the inner JSON-RPC id). */
  readonly requestId: string;
  /** The inner MCP method. */
  readonly method: string;
  /** The inner MCP params; `undefined` when absent or `null`. */
  readonly params: JsonObject | undefined;
  /** The envelope's own `_meta` (not the inner one). */
  readonly meta: JsonObject | undefined;
}

/** Whether an `mcpServers` entry is a server provided over ACP. */
export function isMcpServerDeclaration(value: unknown): value is McpServerDeclaration {
  return isJsonObject(value) && value.type === 'acp' && typeof value.name === 'string' && typeof value.serverId === 'string';
}

/**
 * Reads the params of an `mcp/message` (request or notification); `undefined` when they are
 * malformed (the binding answers such a request `-32602`).
 */
export function parseMcpEnvelope(params: unknown): McpEnvelope | undefined {
  if (!isJsonObject(params)) return undefined;
  const { serverId, requestId, method, params: inner, _meta: meta } = params;
  if (typeof serverId !== 'string' || typeof requestId !== 'string' || typeof method !== 'string') return undefined;
  if (inner !== undefined && inner !== null && !isJsonObject(inner)) return undefined;
  if (meta !== undefined && meta !== null && !isJsonObject(meta)) return undefined;
  return { serverId, requestId, method, params: inner ?? undefined, meta: meta ?? undefined };
}

function isMcpError(value: unknown): value is McpError {
  return isJsonObject(value) && Number.isInteger(value.code) && typeof value.message === 'string';
}

/**
 * Reads the carrier of an `mcp/message` answer; `undefined` when it carries no valid outcome. A
 * carrier with both prefers `result`, as the binding says; a `_meta` that is not an object is dropped.
 */
export function parseMcpOutcome(value: unknown): McpOutcome | undefined {
  if (!isJsonObject(value)) return undefined;
  const meta = isJsonObject(value._meta) ? { _meta: value._meta } : {};
  if (Object.hasOwn(value, 'result') && value.result !== undefined) return { result: value.result, ...meta };
  if (isMcpError(value.error)) return { error: value.error, ...meta };
  return undefined;
}

/** The MCP client identity a caller sends in each request's inner `_meta`. */
export interface McpClientInfo {
  /** The client's name. */
  name: string;
  /** The client's version. */
  version: string;
}

/** Defaults of an MCP caller, sent in the inner `_meta` of requests that do not carry their own. */
export interface McpCallerIdentity {
  /** MCP client capabilities. Default `{}`. */
  clientCapabilities?: JsonObject;
  /** MCP client name and version. */
  clientInfo?: McpClientInfo;
}

/**
 * Inner params with the per-request `_meta` that revision {@link MCP_PROTOCOL_VERSION} requires
 * (revision, client capabilities, client info), keeping whatever the params already carry.
 */
export function withMcpRequestMeta(params: JsonObject | undefined, identity: McpCallerIdentity = {}): JsonObject {
  const meta: JsonObject = { ...(isJsonObject(params?._meta) ? params._meta : {}) };
  if (!Object.hasOwn(meta, MCP_META_PROTOCOL_VERSION)) meta[MCP_META_PROTOCOL_VERSION] = MCP_PROTOCOL_VERSION;
  if (!Object.hasOwn(meta, MCP_META_CLIENT_CAPABILITIES)) meta[MCP_META_CLIENT_CAPABILITIES] = identity.clientCapabilities ?? {};
  if (identity.clientInfo && !Object.hasOwn(meta, MCP_META_CLIENT_INFO)) meta[MCP_META_CLIENT_INFO] = { ...identity.clientInfo };
  return { ...params, _meta: meta };
}

/** The MCP transports an agent accepts in `mcpServers`, read from its `initialize` result. */
export interface McpTransports {
  /** `type: "stdio"` (always in v1; advertised in v2). */
  stdio: boolean;
  /** `type: "http"`. */
  http: boolean;
  /** `type: "sse"` (v1 only). */
  sse: boolean;
  /** `type: "acp"`: the agent calls such servers with `mcp/message` itself. */
  acp: boolean;
}

/**
 * The MCP transports an agent advertised: v1 `agentCapabilities.mcpCapabilities` (booleans; stdio
 * is always supported), v2 `capabilities.session.mcp` (an object for each supported transport).
 */
export function mcpTransportsOf(version: AcpVersion, initializeResult: unknown): McpTransports {
  const result = isJsonObject(initializeResult) ? initializeResult : {};
  if (version === 1) {
    const agent = isJsonObject(result.agentCapabilities) ? result.agentCapabilities : {};
    const mcp = isJsonObject(agent.mcpCapabilities) ? agent.mcpCapabilities : {};
    return { stdio: true, http: mcp.http === true, sse: mcp.sse === true, acp: mcp.acp === true };
  }
  const capabilities = isJsonObject(result.capabilities) ? result.capabilities : {};
  const session = isJsonObject(capabilities.session) ? capabilities.session : {};
  const mcp = isJsonObject(session.mcp) ? session.mcp : {};
  return { stdio: isJsonObject(mcp.stdio), http: isJsonObject(mcp.http), sse: false, acp: isJsonObject(mcp.acp) };
}

/**
 * A copy of an agent's `initialize` result that also advertises `acp` MCP servers (v1
 * `mcpCapabilities.acp: true`, v2 `session.mcp.acp: {}`): what a bridge in front of the agent says.
 */
export function withAcpMcpTransport(version: AcpVersion, initializeResult: JsonObject): JsonObject {
  if (version === 1) {
    const agent = isJsonObject(initializeResult.agentCapabilities) ? initializeResult.agentCapabilities : {};
    const mcp = isJsonObject(agent.mcpCapabilities) ? agent.mcpCapabilities : {};
    return { ...initializeResult, agentCapabilities: { ...agent, mcpCapabilities: { ...mcp, acp: true } } };
  }
  const capabilities = isJsonObject(initializeResult.capabilities) ? initializeResult.capabilities : {};
  const session = isJsonObject(capabilities.session) ? capabilities.session : {};
  const mcp = isJsonObject(session.mcp) ? session.mcp : {};
  return { ...initializeResult, capabilities: { ...capabilities, session: { ...session, mcp: { ...mcp, acp: {} } } } };
}
