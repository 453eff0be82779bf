/**
 * Rewriting the `type: "acp"` entries of a session request's `mcpServers` into what an agent
 * without MCP-over-ACP accepts: an `http` server on the bridge's loopback endpoint, or a `stdio`
 * relay to it.
 *
 * @packageDocumentation
 */
import type { JsonObject, JsonValue } from '../jsonrpc/message';
import { isMcpServerDeclaration, type McpServerDeclaration, type McpTransports } from '../mcp/protocol';
import type { AcpVersion } from '../acp/negotiation';
import type { BridgedServer } from './bridged-server';

/** How the bridge gives a declared `acp` server to the agent. */
export type McpBridgeTransport = 'http' | 'stdio';

/** The environment variable of the stdio relay that holds its endpoint URL. */
export const MCP_RELAY_URL_ENV = 'ACP_WIRE_MCP_URL';
/** The environment variable of the stdio relay that holds its secret (redacted in traces). */
export const MCP_RELAY_TOKEN_ENV = 'ACP_WIRE_MCP_TOKEN';

/** The program that runs the stdio relay (`acp-wire mcp-stdio`), given to the agent as a stdio server. */
export interface McpRelayCommand {
  /** An absolute path to the program. */
  command: string;
  /** Its arguments. */
  args: readonly string[];
}

/**
 * The transport to bridge with: `prefer` when the agent takes it, else the other one it takes;
 * `undefined` when it takes neither (the bridge then cannot deliver `acp` servers).
 */
export function chooseBridgeTransport(transports: McpTransports, prefer: McpBridgeTransport): McpBridgeTransport | undefined {
  const order: McpBridgeTransport[] = prefer === 'http' ? ['http', 'stdio'] : ['stdio', 'http'];
  return order.find((transport) => transports[transport]);
}

/** Whether a session request's params declare an `acp` server. */
export function declaresAcpServer(params: unknown): boolean {
  const servers = (params as { mcpServers?: unknown } | null | undefined)?.mcpServers;
  return Array.isArray(servers) && servers.some(isMcpServerDeclaration);
}

/**
 * A copy of a session request's params (`session/new`, `session/load`, `session/resume`; both ACP
 * versions keep the list at `params.mcpServers`) with each `acp` entry replaced by `rewrite(entry)`;
 * the other entries and fields are unchanged.
 */
export async function rewriteMcpServers(
  params: JsonObject,
  rewrite: (declaration: McpServerDeclaration) => JsonObject | Promise<JsonObject>,
): Promise<JsonObject> {
  const servers = params.mcpServers as JsonValue[];
  const rewritten = await Promise.all(servers.map((entry) => (isMcpServerDeclaration(entry) ? rewrite(entry) : entry)));
  return { ...params, mcpServers: rewritten };
}

function metaOf(declaration: McpServerDeclaration): JsonObject {
  const meta = (declaration as { _meta?: unknown })._meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? { _meta: meta as JsonObject } : {};
}

/** The `http` declaration of a bridged server: its URL, and its secret as a bearer token. */
export function httpDeclaration(declaration: McpServerDeclaration, server: BridgedServer): JsonObject {
  return {
    type: 'http',
    name: declaration.name,
    url: server.url,
    headers: [{ name: 'Authorization', value: `Bearer ${server.secret}` }],
    ...metaOf(declaration),
  };
}

/**
 * The `stdio` declaration of a bridged server: the relay program, with the endpoint URL and secret
 * in its environment. ACP v1 has no `type` on a stdio server; v2 says `type: "stdio"`.
 */
export function stdioDeclaration(
  declaration: McpServerDeclaration,
  server: BridgedServer,
  relay: McpRelayCommand,
  version: AcpVersion,
): JsonObject {
  return {
    ...(version === 2 ? { type: 'stdio' } : {}),
    name: declaration.name,
    command: relay.command,
    args: [...relay.args],
    env: [
      { name: MCP_RELAY_URL_ENV, value: server.url },
      { name: MCP_RELAY_TOKEN_ENV, value: server.secret },
    ],
    ...metaOf(declaration),
  };
}
