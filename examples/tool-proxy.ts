/**
 * A proxy that gives the agent a tool (MCP-over-ACP): it provides an MCP server, written with the
 * official MCP server library, declares it in every `session/new` it forwards, and answers the
 * agent's `mcp/message` calls for it; every other message goes through unchanged.
 *
 * ```sh
 * node dist/bin/acp-wire.js conduct "node dist/examples/tool-proxy.js" "node dist/examples/tool-agent.js"
 * ```
 *
 * An agent without MCP-over-ACP of its own (every agent people run today) gets the tool through
 * the bridge: `acp-wire conduct --mcp-bridge …` (docs/mcp-over-acp.md). Logs go to stderr.
 *
 * @packageDocumentation
 */
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { McpProvider, mcpServerHandler } from '../lib/mcp';
import { ProxyComponent, connectStdio, createStderrLogger, defaultLogger, type JsonObject } from '../lib';

const NAME = 'tool-proxy';
const logger = process.env.ACP_WIRE_LOG ? defaultLogger(NAME) : createStderrLogger({ name: NAME, level: 'warn' });

/** The tools: one that counts the words of a text. */
function wordTools(): McpServer {
  const server = new McpServer({ name: 'word-tools', version: '1.0.0' });
  server.registerTool(
    'word_count',
    { description: 'Counts the words of a text', inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: 'text', text: String(text.split(/\s+/).filter(Boolean).length) }] }),
  );
  return server;
}

const proxy = new ProxyComponent(connectStdio({ name: NAME, logger }));
const mcp = new McpProvider();
const tools = mcpServerHandler(wordTools);
const server = mcp.register({ name: 'word-tools', handler: tools.handler });
proxy.serveMcp(mcp);

// Every session the client opens through this proxy gets the tool.
proxy.onClientRequest<JsonObject>('session/new', (params, responder) => {
  const mcpServers = Array.isArray(params.mcpServers) ? params.mcpServers : [];
  proxy.successor
    .sendRequest('session/new', { ...params, mcpServers: [...mcpServers, { ...server.declaration }] })
    .forwardResponseTo(responder);
});

proxy.connection.once('close', () => void tools.close());
