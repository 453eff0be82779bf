/**
 * The MCP bridge in front of an agent that takes only stdio MCP servers (ACP v2): the stdio
 * declaration it receives, and `acp-wire mcp-stdio` run from it as a child process, driven as the
 * agent's MCP client would, cancellation by `notifications/cancelled` included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { expect } from 'chai';
import { mcpServerHandler, type McpRequestContext } from '../../lib/mcp';
import { LineReader, writeLines } from '../helpers/lines';
import { type BridgeChain, RELAY_COMMAND, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';
import { REFERENCE_SERVER_INFO, referenceMcpServer } from '../helpers/reference-mcp-server';

interface StdioDeclaration {
  type: string;
  name: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
}

describe('McpBridge before an agent that takes stdio MCP servers only (ACP v2)', function () {
  this.timeout(30000);
  useBuild();

  let chain: BridgeChain;
  let declaration: StdioDeclaration;
  let relay: ChildProcess | undefined;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 2, transports: ['stdio'] });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 2, capabilities: {} });
    await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [{ type: 'acp', name: 'tools', serverId: 'tools-1' }] });
    declaration = (chain.received['session/new'][0]!.mcpServers as unknown as StdioDeclaration[])[0]!;
  });
  afterEach(async () => {
    if (relay && relay.exitCode === null && relay.signalCode === null) {
      relay.kill();
      await once(relay, 'exit');
    }
    relay = undefined;
    await chain.close();
  });

  /** Starts the relay as the agent would: the declaration's command, arguments and environment. */
  function startRelay(server = declaration): { input: Writable; output: LineReader } {
    const env = { ...process.env, ...Object.fromEntries(server.env.map(({ name, value }) => [name, value])) };
    relay = spawn(server.command, server.args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
    return { input: relay.stdin!, output: new LineReader(relay.stdout!, { label: 'relay stdout' }) };
  }

  it('gives the agent a v2 stdio declaration running acp-wire mcp-stdio, with the URL and secret in env', () => {
    expect(declaration).to.deep.include({ type: 'stdio', name: 'tools', command: RELAY_COMMAND.command, args: RELAY_COMMAND.args });
    expect(declaration.env.map(({ name }) => name)).to.deep.equal(['ACP_WIRE_MCP_URL', 'ACP_WIRE_MCP_TOKEN']);
    expect(declaration.env[0]!.value).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mcp\//);
  });

  it('relays initialize, notifications/initialized, tools/list and tools/call, answered from the provider, and exits 0 at the end of its input', async () => {
    const { input, output } = startRelay();
    writeLines(input, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stdio-agent', version: '1' } },
    });
    expect(JSON.parse(await output.take())).to.deep.include({
      id: 0,
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {}, resources: {}, prompts: {} },
        serverInfo: { name: 'tools', version: '0.0.0' },
      },
    });
    writeLines(
      input,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'piped' } } },
    );
    const answers = (await output.takeLines(2)).map((line) => JSON.parse(line) as { id: number }).sort((a, b) => a.id - b.id);
    expect(answers).to.deep.equal([
      { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'echo piped' }] } },
    ]);
    expect(chain.calls.at(-1)!.clientInfo).to.deep.equal({ name: 'stdio-agent', version: '1' });
    input.end();
    const [code] = (await once(relay!, 'exit')) as [number | null];
    expect(code).to.equal(0);
  });

  it('turns notifications/cancelled into an aborted handler and one $/cancel_request on the hop, and writes nothing for that request', async () => {
    const { input, output } = startRelay();
    writeLines(input, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } });
    await output.take();
    let hang!: McpRequestContext;
    const started = new Promise<void>((resolve) => {
      const push = chain.calls.push.bind(chain.calls);
      chain.calls.push = (...items) => {
        for (const item of items) if (item.params?.name === 'hang') (hang = item), resolve();
        return push(...items);
      };
    });
    writeLines(input, { jsonrpc: '2.0', id: 'h', method: 'tools/call', params: { name: 'hang', arguments: {} } });
    await started;
    writeLines(input, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'h' } });
    await new Promise((resolve) => hang.signal.addEventListener('abort', resolve, { once: true }));
    const cancel = JSON.parse(await chain.hop.fromRight.take((m) => m.method === '$/cancel_request')) as { params: { requestId: unknown } };
    const sent = chain.hop.fromRight.messages.find(
      (m) => m.method === 'mcp/message' && (m.params as { requestId: string }).requestId === hang.requestId,
    );
    expect(cancel.params.requestId).to.equal(sent!.id);
    writeLines(input, { jsonrpc: '2.0', id: 9, method: 'ping' });
    expect(JSON.parse(await output.take())).to.deep.equal({ jsonrpc: '2.0', id: 9, result: {} });
    input.end();
    await once(relay!, 'exit');
    expect(output.lines.map((line) => (JSON.parse(line) as { id: unknown }).id)).to.deep.equal([0, 9]);
  });

  it("writes a tool's elicitation/create as a line and POSTs the client's answer line back, then the tool's result", async () => {
    const reference = mcpServerHandler(() => referenceMcpServer());
    const registration = chain.provider.register({ name: 'reference', serverId: 'reference-1', handler: reference.handler });
    try {
      await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [registration.declaration] });
      const { input, output } = startRelay((chain.received['session/new'][1]!.mcpServers as unknown as StdioDeclaration[])[0]!);
      const capabilities = { elicitation: {} };
      writeLines(input, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities } });
      await output.take();
      writeLines(input, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'test_elicitation', arguments: { message: 'Name?' } },
      });
      const asked = JSON.parse(await output.take()) as { id: string; method: string; params: { message: string } };
      expect(asked).to.deep.include({ method: 'elicitation/create' });
      expect(asked.params.message).to.equal('Name?');
      writeLines(input, { jsonrpc: '2.0', id: asked.id, result: { action: 'decline' } });
      expect(JSON.parse(await output.take())).to.deep.equal({
        jsonrpc: '2.0',
        id: 1,
        result: {
          content: [{ type: 'text', text: 'User response: {"action":"decline"}' }],
          resultType: 'complete',
          _meta: { 'io.modelcontextprotocol/serverInfo': REFERENCE_SERVER_INFO },
        },
      });
      input.end();
      await once(relay!, 'exit');
    } finally {
      await reference.close();
    }
  });
});
