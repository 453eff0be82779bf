/**
 * The MCP revisions that real agents' MCP clients speak (up to 2025-11-25): the `initialize`
 * handshake, the Streamable HTTP headers, and which revision a request belongs to.
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import { MCP_META_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from '../mcp/protocol';

/** The MCP revisions with an `initialize` handshake that the bridge answers, newest first. */
export const LEGACY_MCP_PROTOCOL_VERSIONS: readonly string[] = Object.freeze(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);

/** The Streamable HTTP header that names an MCP session (issued on `initialize`). */
export const MCP_SESSION_ID_HEADER = 'mcp-session-id';

/** The Streamable HTTP header that names the MCP revision of a request. */
export const MCP_PROTOCOL_VERSION_HEADER = 'mcp-protocol-version';

/** The MCP methods of the handshake and of liveness, answered by the bridge itself. */
export const MCP_INITIALIZE_METHOD = 'initialize';
/** See {@link MCP_INITIALIZE_METHOD}. */
export const MCP_PING_METHOD = 'ping';
/** The MCP notification that cancels a request by its MCP id. */
export const MCP_CANCELLED_NOTIFICATION = 'notifications/cancelled';
/** The 2026-07-28 request that describes a server (capabilities, info, instructions). */
export const MCP_DISCOVER_METHOD = 'server/discover';

/**
 * The revision to answer an `initialize` with: the one the client asked for when the bridge speaks
 * it, else the newest the bridge speaks (the client then decides whether it can go on).
 */
export function negotiateLegacyVersion(requested: unknown): string {
  return typeof requested === 'string' && LEGACY_MCP_PROTOCOL_VERSIONS.includes(requested) ? requested : LEGACY_MCP_PROTOCOL_VERSIONS[0]!;
}

/**
 * Whether a request is of the stateless revision the binding carries ({@link MCP_PROTOCOL_VERSION}):
 * its `MCP-Protocol-Version` header or its `params._meta` says so. Such a request needs no session.
 */
export function isStatelessRevision(headerVersion: string | undefined, params: JsonObject | undefined): boolean {
  if (headerVersion === MCP_PROTOCOL_VERSION) return true;
  const meta = params?._meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) && meta[MCP_META_PROTOCOL_VERSION] === MCP_PROTOCOL_VERSION;
}

/** The revisions a request may name in its `MCP-Protocol-Version` header: the stateless one, then the older ones. */
export const SPOKEN_MCP_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([MCP_PROTOCOL_VERSION, ...LEGACY_MCP_PROTOCOL_VERSIONS]);

/**
 * Why a request's `MCP-Protocol-Version` header is refused (answered 400), or `undefined` when it
 * names a revision the bridge speaks, or is absent (then a session's request is of the session's
 * revision, and one without a session must say 2026-07-28 in its `_meta`).
 */
export function unsupportedRevisionReason(headerVersion: string | undefined): string | undefined {
  if (headerVersion === undefined || SPOKEN_MCP_PROTOCOL_VERSIONS.includes(headerVersion)) return undefined;
  return `Bad Request: unsupported MCP-Protocol-Version ${headerVersion} (supported: ${SPOKEN_MCP_PROTOCOL_VERSIONS.join(', ')})`;
}
