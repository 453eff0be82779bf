/**
 * The bridge's answer to an MCP `initialize`: the revision, the server's info, and its
 * capabilities, asked of the provider with `server/discover` when it answers that.
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import type { McpCaller } from '../mcp/caller';
import { McpBindingErrorCode, MCP_META_CLIENT_CAPABILITIES, MCP_META_CLIENT_INFO, MCP_META_SERVER_INFO } from '../mcp/protocol';
import { MCP_DISCOVER_METHOD, negotiateLegacyVersion } from './legacy-mcp';

/**
 * The capabilities the bridge advertises for a provider that does not answer `server/discover`:
 * tools, resources and prompts, none with `listChanged` or `subscribe` (those need messages the
 * server sends on its own, which the bridge does not carry). A provider without one of them answers
 * its list request with an MCP error, which MCP clients take as "none".
 */
export const FALLBACK_MCP_CAPABILITIES: Readonly<JsonObject> = Object.freeze({ tools: {}, resources: {}, prompts: {} });

/** The server capabilities the bridge can deliver to a 2025-revision client, each without options. */
const DELIVERABLE_CAPABILITIES: readonly string[] = ['tools', 'resources', 'prompts', 'logging', 'completions'];

/**
 * What a session may be promised of a provider's capabilities: `tools`, `resources`, `prompts`,
 * `logging` (the bridge answers `logging/setLevel` and stamps the level on each request) and
 * `completions`, stripped of `listChanged` and `subscribe`, since their notifications would need a
 * stream the server opens on its own (GET), which the bridge does not serve; `experimental` as it
 * is. Anything else (`tasks`, extensions) is left out: the bridge cannot vouch for it.
 */
export function deliverableCapabilities(capabilities: JsonObject): JsonObject {
  const deliverable: JsonObject = {};
  for (const name of DELIVERABLE_CAPABILITIES) if (isJsonObject(capabilities[name])) deliverable[name] = {};
  if (isJsonObject(capabilities.experimental)) deliverable.experimental = capabilities.experimental;
  return deliverable;
}

/**
 * The server's name and version from a `server/discover` answer: revision 2026-07-28 puts them in
 * the result's `_meta` (`io.modelcontextprotocol/serverInfo`); a top-level `serverInfo` is taken too.
 */
export function discoveredServerInfo(discovered: JsonObject): JsonObject {
  const meta = isJsonObject(discovered._meta) ? discovered._meta : {};
  const info = meta[MCP_META_SERVER_INFO];
  if (isJsonObject(info)) return info;
  return isJsonObject(discovered.serverInfo) ? discovered.serverInfo : {};
}

/** What the bridge knows of the server it answers an `initialize` for. */
export interface HandshakeServer {
  /** The declared `serverId`. */
  readonly serverId: string;
  /** The declared name: the `serverInfo.name` the client sees. */
  readonly name: string;
}

/** The client's side of an `initialize`, as the session keeps it. */
export interface ClientHandshake {
  readonly protocolVersion: string;
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: JsonValue | undefined;
}

/** Reads an `initialize` request's params: the revision to answer with, and the client's identity. */
export function clientHandshakeOf(params: JsonObject | undefined): ClientHandshake {
  return {
    protocolVersion: negotiateLegacyVersion(params?.protocolVersion),
    clientCapabilities: isJsonObject(params?.capabilities) ? params.capabilities : {},
    clientInfo: params?.clientInfo,
  };
}

/**
 * The `initialize` result for `server`: the {@link deliverableCapabilities} of the provider's
 * `server/discover` answer, its info and instructions, when it gives them; else
 * {@link FALLBACK_MCP_CAPABILITIES}.
 *
 * @throws RpcError (rejects) `-33001` when no component on the route provides the server: the
 * client then sees the server fail at once, not at its first call
 */
export async function initializeResult(caller: McpCaller, server: HandshakeServer, client: ClientHandshake): Promise<JsonObject> {
  const meta: JsonObject = { [MCP_META_CLIENT_CAPABILITIES]: client.clientCapabilities };
  if (client.clientInfo !== undefined) meta[MCP_META_CLIENT_INFO] = client.clientInfo;
  let discovered: JsonObject = {};
  try {
    const outcome = await caller.request(server.serverId, MCP_DISCOVER_METHOD, { _meta: meta });
    if ('result' in outcome && isJsonObject(outcome.result)) discovered = outcome.result;
  } catch (error) {
    if (error instanceof RpcError && error.code === McpBindingErrorCode.ServerUnavailable) throw error;
  }
  const serverInfo = discoveredServerInfo(discovered);
  const result: JsonObject = {
    protocolVersion: client.protocolVersion,
    capabilities: isJsonObject(discovered.capabilities)
      ? deliverableCapabilities(discovered.capabilities)
      : { ...FALLBACK_MCP_CAPABILITIES },
    serverInfo: { ...serverInfo, name: server.name, version: typeof serverInfo.version === 'string' ? serverInfo.version : '0.0.0' },
  };
  if (typeof discovered.instructions === 'string') result.instructions = discovered.instructions;
  return result;
}
