/**
 * `acp-wire mcp-stdio`: the stdio MCP server an agent runs for a server bridged by
 * `acp-wire conduct --mcp-bridge`; it relays to the bridge's loopback endpoint.
 *
 * @packageDocumentation
 */
import { MCP_RELAY_TOKEN_ENV, MCP_RELAY_URL_ENV } from '../mcp-bridge/declarations';
import { runMcpStdioRelay } from '../mcp-bridge/stdio-relay';
import { UsageError, parseCommandArguments } from './arguments';
import type { Subcommand } from './subcommand';

const HELP = `usage: acp-wire mcp-stdio

A stdio MCP server that relays every message to an MCP server bridged by
"acp-wire conduct --mcp-bridge": the bridge gives it to an agent that takes stdio MCP servers,
with ${MCP_RELAY_URL_ENV} (the server's loopback URL) and ${MCP_RELAY_TOKEN_ENV} (its secret) in its
environment. It reads one JSON-RPC message per line on stdin and writes each answer as one line on
stdout; a notifications/cancelled for a request in flight cancels it on the bridge. It ends when
stdin ends, once every request was answered.

options:
  -h, --help   show this text

exit codes: 0 when stdin ended; 2 for bad usage (a variable missing).`;

/** The `mcp-stdio` subcommand. */
export const mcpStdio: Subcommand = {
  name: 'mcp-stdio',
  summary: 'relay a stdio MCP client to a server bridged by conduct --mcp-bridge',
  help: HELP,
  async run(argv) {
    const { positionals } = parseCommandArguments(argv, {});
    if (positionals.length > 0) throw new UsageError(`mcp-stdio takes no arguments, got ${JSON.stringify(positionals[0])}`);
    const url = process.env[MCP_RELAY_URL_ENV];
    const token = process.env[MCP_RELAY_TOKEN_ENV];
    if (!url || !URL.canParse(url)) throw new UsageError(`${MCP_RELAY_URL_ENV} must hold the bridged server's URL`);
    if (!token) throw new UsageError(`${MCP_RELAY_TOKEN_ENV} must hold the bridged server's secret`);
    await runMcpStdioRelay({ url, token });
    return 0;
  },
};
