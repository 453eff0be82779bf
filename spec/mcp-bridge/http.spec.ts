/**
 * The MCP bridge in front of an agent that takes `http` MCP servers: the declaration it receives,
 * and the loopback endpoint driven as the agent's MCP client would (MCP 2025-06-18 handshake,
 * sessions, SSE progress, the stateless 2026-07-28 revision), with a real MCP client too.
 */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_PROTOCOL_VERSION } from '../../lib/mcp';
import { type BridgeChain, httpDeclarationOf, httpPost, sseMessages, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';

const ACP_TOOLS = { type: 'acp', name: 'tools', serverId: 'tools-1' };
const OTHER_SERVER = { type: 'http', name: 'docs', url: 'https://docs.example/mcp', headers: [] };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 'spec-agent-mcp', version: '9.9.9' } },
};

describe('McpBridge before an agent that takes http MCP servers (ACP v1)', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain;
  let url: string;
  let authorization: string;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 1, transports: ['http'] });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS, OTHER_SERVER] });
    ({ url, authorization } = httpDeclarationOf(chain.received));
  });
  afterEach(() => chain.close());

  /** Opens an MCP session; resolves with its headers for later requests. */
  async function openSession(): Promise<Record<string, string>> {
    const answer = await httpPost(url, INITIALIZE, { headers: { authorization } });
    return { authorization, 'mcp-session-id': String(answer.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
  }

  it('gives the agent an http declaration on 127.0.0.1 with a bearer secret, and the other servers unchanged', () => {
    const [bridged, other] = chain.received['session/new'][0]!.mcpServers as unknown as Record<string, unknown>[];
    expect(bridged).to.have.all.keys('type', 'name', 'url', 'headers');
    expect(bridged).to.deep.include({ type: 'http', name: 'tools' });
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/[0-9a-f-]{36}$/);
    expect(authorization).to.match(/^Bearer [A-Za-z0-9_-]{43}$/);
    expect(other).to.deep.equal(OTHER_SERVER);
  });

  it('answers initialize itself with the revision asked for, the declared name and a session id; the provider is asked server/discover only', async () => {
    const answer = await httpPost(url, INITIALIZE, { headers: { authorization } });
    expect(answer.status).to.equal(200);
    expect(answer.headers['mcp-session-id']).to.match(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answer.body)).to.deep.equal({
      jsonrpc: '2.0',
      id: 0,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {}, resources: {}, prompts: {} },
        serverInfo: { name: 'tools', version: '0.0.0' },
      },
    });
    expect(chain.calls.map((call) => call.method)).to.deep.equal(['server/discover']);
  });

  it('carries tools/list and tools/call to the provider with the 2026-07-28 _meta of the session, and answers with their results', async () => {
    const headers = await openSession();
    expect((await httpPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { headers })).status).to.equal(202);
    const list = await httpPost(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { headers });
    expect(JSON.parse(list.body)).to.deep.equal({
      jsonrpc: '2.0',
      id: 1,
      result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] },
    });
    const call = await httpPost(
      url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
      { headers },
    );
    expect(JSON.parse(call.body)).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'echo hi' }] } });
    const last = chain.calls.at(-1)!;
    expect(last).to.deep.include({ method: 'tools/call', serverId: 'tools-1', protocolVersion: MCP_PROTOCOL_VERSION });
    expect(last.clientInfo).to.deep.equal({ name: 'spec-agent-mcp', version: '9.9.9' });
    expect(last.clientCapabilities).to.deep.equal({ roots: {} });
  });

  it('answers ping itself and turns an MCP error of the provider into the JSON-RPC error', async () => {
    const headers = await openSession();
    const ping = await httpPost(url, { jsonrpc: '2.0', id: 'p', method: 'ping' }, { headers });
    expect(JSON.parse(ping.body)).to.deep.equal({ jsonrpc: '2.0', id: 'p', result: {} });
    const prompts = await httpPost(url, { jsonrpc: '2.0', id: 3, method: 'prompts/list' }, { headers });
    expect(JSON.parse(prompts.body)).to.deep.equal({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32601, message: 'Method not found: prompts/list' },
    });
  });

  it('sends a progress notification, then the result, as SSE events of the POST', async () => {
    const headers = await openSession();
    const answer = await httpPost(
      url,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'progress', arguments: { text: 'x' } } },
      { headers },
    );
    expect(answer.headers['content-type']).to.equal('text/event-stream');
    expect(sseMessages(answer.body)).to.deep.equal([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1, total: 2 } },
      { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: 'echo x' }] } },
    ]);
  });

  it('refuses a request without a session 400, an unknown session 404, and GET 405; DELETE ends a session', async () => {
    const tools = { jsonrpc: '2.0', id: 5, method: 'tools/list' };
    expect((await httpPost(url, tools, { headers: { authorization } })).status).to.equal(400);
    expect((await httpPost(url, tools, { headers: { authorization, 'mcp-session-id': 'nope' } })).status).to.equal(404);
    expect((await httpPost(url, undefined, { method: 'GET', headers: { authorization } })).status).to.equal(405);
    const headers = await openSession();
    expect((await httpPost(url, undefined, { method: 'DELETE', headers })).status).to.equal(204);
    expect((await httpPost(url, tools, { headers })).status).to.equal(404);
    expect(chain.calls.map((call) => call.method)).to.deep.equal(['server/discover']);
  });

  it('answers 400 with a JSON-RPC error to an MCP-Protocol-Version it does not speak, in a session or not', async () => {
    const headers = await openSession();
    const tools = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    const refused: Record<string, string>[] = [
      { ...headers, 'mcp-protocol-version': '1999-01-01' },
      { authorization, 'mcp-protocol-version': '1999-01-01' },
    ];
    for (const sent of refused) {
      const answer = await httpPost(url, tools, { headers: sent });
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.body)).to.deep.equal({
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: -32600,
          message:
            'Bad Request: unsupported MCP-Protocol-Version 1999-01-01 (supported: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)',
        },
      });
    }
    const wrong = { ...headers, 'mcp-protocol-version': 'x' };
    expect((await httpPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { headers: wrong })).status).to.equal(400);
    expect((await httpPost(url, undefined, { method: 'DELETE', headers: wrong })).status).to.equal(400);
    expect((await httpPost(url, tools, { headers })).status).to.equal(200);
    expect(chain.calls.map((call) => call.method)).to.deep.equal(['server/discover', 'tools/list']);
  });

  it('serves a session request without MCP-Protocol-Version at the revision of its session, and one naming another revision it speaks', async () => {
    const { 'mcp-protocol-version': _negotiated, ...withoutVersion } = await openSession();
    const tools = { jsonrpc: '2.0', id: 8, method: 'tools/list' };
    expect((await httpPost(url, tools, { headers: withoutVersion })).status).to.equal(200);
    expect((await httpPost(url, tools, { headers: { ...withoutVersion, 'mcp-protocol-version': '2025-03-26' } })).status).to.equal(200);
  });

  it('takes a stateless 2026-07-28 request without a session and passes its _meta on', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION,
      'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
    };
    const answer = await httpPost(
      url,
      { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo', arguments: { text: 'new' }, _meta: meta } },
      { headers: { authorization, 'mcp-protocol-version': MCP_PROTOCOL_VERSION } },
    );
    expect(JSON.parse(answer.body)).to.deep.equal({ jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: 'echo new' }] } });
    expect(chain.calls.at(-1)!.clientCapabilities).to.deep.equal({ sampling: {} });
  });

  it('works for the MCP SDK 1.x client (initialize at 2025-11-25, Mcp-Session-Id, tools/list, tools/call)', async () => {
    const client = new Client({ name: 'sdk-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: authorization } } });
    await client.connect(transport);
    try {
      expect(transport.sessionId).to.be.a('string');
      expect(transport.protocolVersion).to.equal('2025-11-25');
      expect(client.getServerVersion()).to.deep.equal({ name: 'tools', version: '0.0.0' });
      expect((await client.listTools()).tools.map((tool) => tool.name)).to.deep.equal(['echo']);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'sdk' } });
      expect(result.content).to.deep.equal([{ type: 'text', text: 'echo sdk' }]);
      expect(chain.calls.at(-1)!.clientInfo).to.deep.equal({ name: 'sdk-client', version: '1.0.0' });
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });
});
