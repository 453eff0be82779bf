/**
 * An agent that calls the tools its sessions were given over ACP (MCP-over-ACP): it advertises
 * `acp` MCP servers, and for each prompt calls `tools/call` on the first tool of the first such
 * server with the prompt's text, then streams the tool's answer. Run behind the tool proxy (see
 * examples/tool-proxy.ts). Logs go to stderr.
 *
 * @packageDocumentation
 */
import { AcpAgent, connectStdio, type AgentTurn, type JsonObject } from '../lib';
import { McpCaller, isMcpServerDeclaration, type McpServerDeclaration } from '../lib/mcp';

const connection = connectStdio({ name: 'tool-agent' });
const mcp = new McpCaller(connection, { clientInfo: { name: 'tool-agent', version: '1.0.0' } });
mcp.listen(connection);
const serversOf = new Map<string, McpServerDeclaration[]>();

/** Calls the session's first tool with the prompt's text; the tool's text, or why there is none. */
async function callFirstTool(turn: AgentTurn): Promise<string> {
  const [server] = serversOf.get(turn.sessionId) ?? [];
  if (!server) return 'no MCP server was declared for this session';
  const listed = await mcp.request(server.serverId, 'tools/list', {}, { signal: turn.signal });
  const tool = 'result' in listed ? ((listed.result as { tools?: { name: string }[] }).tools ?? [])[0] : undefined;
  if (!tool) return `${server.name} has no tools`;
  const text = turn.prompt.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
  const called = await mcp.request(server.serverId, 'tools/call', { name: tool.name, arguments: { text } }, { signal: turn.signal });
  if ('error' in called) return `${tool.name} failed: ${called.error.message}`;
  const content = (called.result as { content?: { type: string; text?: string }[] }).content ?? [];
  return `${tool.name} (from ${server.name}) says: ${content.map((block) => block.text ?? '').join('')}`;
}

new AcpAgent(connection, {
  info: { name: 'tool-agent', version: '1.0.0' },
  initialize: ({ version }) => ({
    capabilities: version === 1 ? { mcpCapabilities: { acp: true } as JsonObject } : { session: { mcp: { acp: {} } } as JsonObject },
  }),
  newSession: ({ params }) => {
    const sessionId = crypto.randomUUID();
    const declared: unknown[] = Array.isArray(params.mcpServers) ? params.mcpServers : [];
    serversOf.set(sessionId, declared.filter((server) => isMcpServerDeclaration(server)) as McpServerDeclaration[]);
    return { sessionId };
  },
  async prompt(turn) {
    turn.sendText(await callFirstTool(turn));
    return 'end_turn';
  },
});
