/**
 * Logging in a 2025-revision MCP session: the bridge answers `logging/setLevel` itself (revision
 * 2026-07-28 has no such method) and stamps the session's level on each request it forwards, as
 * `io.modelcontextprotocol/logLevel` in `params._meta`, the way that revision asks for log messages.
 *
 * @packageDocumentation
 */
import { isJsonObject, type JsonObject, type RequestId } from '../jsonrpc/message';
import { MCP_META_LOG_LEVEL } from '../mcp/protocol';
import { mcpErrorResponse, type McpWireMessage } from './reply';
import type { McpSession } from './sessions';

/** The request that sets a 2025-revision session's log level. */
export const MCP_SET_LEVEL_METHOD = 'logging/setLevel';

/** The log levels, least severe first (RFC 5424's, as MCP names them). */
export const MCP_LOG_LEVELS: readonly string[] = Object.freeze([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);

/**
 * The answer to `logging/setLevel` in `session`: `{}` once the level is kept; `-32602` for a level
 * that is not one; `-32601` when the server did not declare `logging` (the session was not offered it).
 */
export function answerSetLevel(id: RequestId, params: JsonObject | undefined, session: McpSession): McpWireMessage {
  if (!isJsonObject(session.capabilities.logging)) return mcpErrorResponse(id, -32601, `Method not found: ${MCP_SET_LEVEL_METHOD}`);
  const level = params?.level;
  if (typeof level !== 'string' || !MCP_LOG_LEVELS.includes(level)) {
    return mcpErrorResponse(id, -32602, `Invalid params: level must be one of ${MCP_LOG_LEVELS.join(', ')}`);
  }
  session.logLevel = level;
  return { jsonrpc: '2.0', id, result: {} };
}

/** `meta` with the session's log level, when one was set and the request names none itself. */
export function withSessionLogLevel(meta: JsonObject, session: McpSession): JsonObject {
  if (session.logLevel === undefined || Object.hasOwn(meta, MCP_META_LOG_LEVEL)) return meta;
  return { ...meta, [MCP_META_LOG_LEVEL]: session.logLevel };
}
