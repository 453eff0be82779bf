/**
 * The MCP bridge in front of a provider written with `@modelcontextprotocol/server` 2.4 (the
 * reference server: tools, resources, prompts, logging, completions, input_required), driven by the
 * official MCP SDK 1.x client as an agent's MCP client (revision 2025-11-25, a session).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { MCP_PROTOCOL_VERSION, mcpServerHandler, type McpServerHandler } from '../../lib/mcp';
import { rejectionOf } from '../helpers/async';
import { type BridgeChain, httpDeclarationOf, openPost, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';
import { REFERENCE_SERVER_INFO, referenceMcpServer } from '../helpers/reference-mcp-server';

describe('McpBridge before a provider written with the MCP server library', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain;
  let reference: McpServerHandler;
  let url: string;
  let authorization: string;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 1, transports: ['http'] });
    reference = mcpServerHandler(() => referenceMcpServer());
    const registration = chain.provider.register({ name: 'reference', serverId: 'reference-1', handler: reference.handler });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [registration.declaration] });
    ({ url, authorization } = httpDeclarationOf(chain.received));
    client = new Client({ name: 'spec-agent-mcp', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {}, roots: {} } });
    transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: authorization } } });
    await client.connect(transport);
  });
  afterEach(async () => {
    await client.close();
    await chain.close();
    await reference.close();
  });

  it("gives the provider's serverInfo version (from server/discover's _meta) under the declared name", () => {
    expect(client.getServerVersion()).to.deep.equal({ name: 'reference', version: REFERENCE_SERVER_INFO.version });
  });

  it('advertises only what it can deliver: no listChanged and no subscribe, logging and completions kept', () => {
    expect(client.getServerCapabilities()).to.deep.equal({ logging: {}, completions: {}, tools: {}, resources: {}, prompts: {} });
  });

  it('answers logging/setLevel itself, and the log messages of a tool at or above that level reach the client', async () => {
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
    expect(await client.setLoggingLevel('info')).to.deep.equal({});
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logs).to.deep.equal(
      ['Tool execution started', 'Tool processing data', 'Tool execution completed'].map((data) => ({
        level: 'info',
        data,
        logger: 'reference',
      })),
    );
    await client.setLoggingLevel('warning');
    const quiet = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(quiet.content).to.deep.equal([{ type: 'text', text: 'Tool with logging executed' }]);
    expect(logs).to.have.lengthOf(3);
  });

  it('refuses logging/setLevel with a level that is not one -32602', async () => {
    const error = await rejectionOf<McpError>(client.request({ method: 'logging/setLevel', params: { level: 'loud' } }, Object as never));
    expect(error.code).to.equal(-32602);
  });

  it("carries an input_required elicitation to the client on the POST's stream and resumes the tool with its answer", async () => {
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    expect(asked).to.deep.equal(['Who are you?']);
    expect(result.content).to.deep.equal([
      { type: 'text', text: 'User response: {"action":"accept","content":{"username":"ada","email":"ada@example.com"}}' },
    ]);
  });

  it('carries sampling/createMessage and roots/list the same way', async () => {
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled' },
      model: 'spec-model',
      stopReason: 'endTurn',
    }));
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Say something' } });
    expect(sampled.content).to.deep.equal([{ type: 'text', text: 'LLM response: {"type":"text","text":"sampled"}' }]);
    const roots = await client.callTool({ name: 'test_list_roots', arguments: {} });
    expect(roots.content).to.deep.equal([{ type: 'text', text: 'roots: file:///work' }]);
  });

  it("tags a 2026-07-28 subscriptions/listen stream with the client's request id: the acknowledgement's subscriptionId is the listen's id", async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
    const listen = {
      jsonrpc: '2.0',
      id: 'listen:0',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: meta },
    };
    const stream = openPost(url, listen, {
      authorization,
      'mcp-protocol-version': MCP_PROTOCOL_VERSION,
      'mcp-method': 'subscriptions/listen',
    });
    try {
      expect(await stream.head).to.deep.equal({ status: 200, contentType: 'text/event-stream' });
      expect(await stream.next()).to.deep.equal({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:0' } },
      });
    } finally {
      stream.abort();
    }
  });

  it("answers an MCP error naming the input request when the client's answer to it is an error", async () => {
    client.setRequestHandler(ElicitRequestSchema, () => {
      throw new McpError(-32000, 'the user closed the dialog');
    });
    const error = await rejectionOf<McpError>(client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } }));
    expect(error.code).to.equal(-32603);
    expect(error.message).to.include('elicitation/create').and.include('the user closed the dialog');
  });
});
